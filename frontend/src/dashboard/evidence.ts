/**
 * What the offline simulation says about each queue order a lead may choose, against random:
 * composed from `simulation_evidence.json`, which `manage.py simulate_active_learning` writes
 * with bench/results/simulation.md (so the dashboard's words follow the shipped results).
 */
import shipped from "./simulation_evidence.json";

export interface EvidenceRow {
  set: string;
  split: string; // "development" or "vault"
  efficiency: number | null; // null: random's final F1 was never reached
  aulc_diff: number;
  aulc_diff_ci: number[];
}

export interface Evidence {
  seeds: number;
  strategies: Record<string, EvidenceRow[]>;
}

export const DEFAULT_STRATEGY = "answer_stratified";
// "mix" spends most of its labels as convincing_wrong does: its own runs are that strategy's
const SAME_AS: Record<string, string> = { mix: "convincing_wrong" };
// The names the settings page shows (annotate/models/choices.py Strategy)
const STRATEGY_NAMES: Record<string, string> = {
  answer_stratified: "Answer-stratified",
  value: "Value per label",
  uncertainty: "Uncertainty",
  convincing_wrong: "Convincing wrong answer",
  mix: "Mix (PRM800K's)",
  bald: "BALD",
  random: "Random",
};
export const named = (s: string) => STRATEGY_NAMES[s] ?? s;

const SET_NAMES: Record<string, string> = {
  gsm8k: "GSM8K",
  math: "MATH",
  olympiadbench: "OlympiadBench",
  stepwise: "PRM800K stepwise",
  mrben: "MR-Ben",
};

function signed(x: number): string {
  return `${x >= 0 ? "+" : ""}${x.toFixed(3)}`;
}

function where(rows: EvidenceRow[]): string {
  return rows.map((r) => `${SET_NAMES[r.set] ?? r.set} (${r.split})`).join(", ");
}

/** One paragraph for the strategy's caveat line; "" for random and for orders never simulated. */
export function strategyCaveat(strategy: string, evidence: Evidence = shipped): string {
  const source = SAME_AS[strategy] ?? strategy;
  const rows = evidence.strategies[source];
  if (strategy === "random" || !rows?.length) return "";
  const sets = new Set(rows.map((r) => r.set)).size;
  const diffs = rows.map((r) => r.aulc_diff);
  const below = rows.filter((r) => r.aulc_diff_ci[1] < 0);
  const above = rows.filter((r) => r.aulc_diff_ci[0] > 0);
  const slower = rows.filter((r) => r.efficiency === null || r.efficiency < 1);
  const never = rows.filter((r) => r.efficiency === null).length;
  const reached = rows.map((r) => r.efficiency).filter((e): e is number => e !== null);
  const mostly = source === strategy ? "" : `${named(strategy)} is mostly the ${named(source)} order; these are its runs. `;
  let text =
    `In the offline simulation (${evidence.seeds} seeds, ${sets} data sets, development and vault) the ` +
    `${named(source)} order's area under the learning curve (first-error F1) minus random's ranged from ` +
    `${signed(Math.min(...diffs))} to ${signed(Math.max(...diffs))} over the ${rows.length} splits` +
    (above.length ? `, above random with its 95% interval over zero on ${where(above)}` : "") +
    (below.length
      ? `${above.length ? ";" : ","} below random with its 95% interval under zero on ${where(below)}. `
      : `${above.length ? "; " : ", with "}no 95% interval under zero. `) +
    `It needed more labels than random to reach random's final F1 on ${slower.length} of ${rows.length} splits`;
  if (never) {
    const which = never < slower.length ? `on ${never} of these` : never === 1 ? "there" : "on any of these";
    text += `, and never reached it ${which}`;
  }
  if (reached.length) {
    const lo = Math.min(...reached).toFixed(2);
    const hi = Math.max(...reached).toFixed(2);
    text += `; where it reached it, its label efficiency was ${lo === hi ? `${lo}x` : `${lo}x to ${hi}x`} (2.00x: half the labels)`;
  }
  text += ". One crossing point swings with noise; the area is the measure to trust.";
  const lead = below.length ? "Caution: " : "";
  const tail =
    strategy === DEFAULT_STRATEGY
      ? " It needs no model and stays the default by a rule written before these runs (bench/results/simulation.md)."
      : ` The default, ${named(DEFAULT_STRATEGY)}, needs no model and was kept by a rule written before these runs.`;
  return lead + mostly + text + tail;
}
