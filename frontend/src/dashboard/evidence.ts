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
  const slower = rows.filter((r) => r.efficiency === null || r.efficiency < 1);
  const never = rows.filter((r) => r.efficiency === null).length;
  const reached = rows.map((r) => r.efficiency).filter((e): e is number => e !== null);
  const name = source === strategy ? strategy : `${strategy} (mostly ${source}, whose runs these are)`;
  const parts = [
    `in the offline simulation (${evidence.seeds} seeds, ${sets} data sets, development and vault) ` +
      `${name}'s area under the learning curve against random ranged ${signed(Math.min(...diffs))} to ` +
      `${signed(Math.max(...diffs))} (first-error F1)`,
    below.length
      ? `; below random, with its interval under zero, on ${where(below)}`
      : "; its interval was under zero on no split",
    `. Its label efficiency against random was below 1.0x on ${slower.length} of ${rows.length} splits`,
  ];
  if (reached.length) {
    const span = `${Math.min(...reached).toFixed(2)}x to ${Math.max(...reached).toFixed(2)}x`;
    parts.push(never ? ` (${span}; ${never} never reached random's final F1)` : ` (${span})`);
  }
  const text = parts.join("") + ".";
  const lead = below.length ? "Caution: " : "";
  const tail =
    strategy === DEFAULT_STRATEGY
      ? " With this CPU PRM no order saves labels beyond noise; this one needs no model."
      : ` The default ${DEFAULT_STRATEGY} is recommended.`;
  return lead + (lead ? text : text[0].toUpperCase() + text.slice(1)) + tail;
}
