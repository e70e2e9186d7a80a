/**
 * The dashboard of a compare project (pairwise preferences, issue 16): the pair-quality figures from
 * GET …/compare-stats/ and the reward model's held-out pairwise accuracy (the latest point of the
 * learning curve, whose runs train a Bradley-Terry model on the preferences).
 */
import { DASH, fmtEta, fmtInt, fmtPace, fmtPct, fmtScore, plural } from "./format";
import type { Figure } from "./format";
import type { CompareStats, CurvePoint, PairProgress, Share } from "../api/types";

export interface CompareFigure {
  key: string;
  label: string;
  value: string;
  note: string;
  warn?: boolean;
}

/** "62.5% (41–80%)" or "—" before there is anything to count. */
export function fmtShare(s: Share): string {
  if (s.share === null || s.share === undefined || !s.n) return "—";
  const ci = s.ci95 && s.ci95.length === 2 ? ` (${fmtPct(s.ci95[0], 0)}–${fmtPct(s.ci95[1], 0)})` : "";
  return `${fmtPct(s.share)}${ci}`;
}

/** Left-side share whose 95% interval excludes 0.5: annotators lean to one position. */
export function positionBiased(s: Share): boolean {
  return Boolean(s.n && s.ci95 && (s.ci95[0] > 0.5 || s.ci95[1] < 0.5));
}

/** Fewer decided answers than this say little of a position bias: the figure says so instead of "no bias". */
export const POSITION_MIN_ANSWERS = 30;

/**
 * The note under "chose the left candidate". With few decided answers (ties decide nothing) a
 * share near 50% is no evidence of no bias: "too few answers to tell (n=18)"; an interval that
 * leaves 50% out even so still says "biased".
 */
export function positionNote(s: Share): string {
  const n = s.n ?? 0;
  if (!n) return "no decided answer yet";
  const biased = positionBiased(s);
  if (n < POSITION_MIN_ANSWERS) {
    return biased
      ? `${plural(n, "decided answer")}, few, but already leaning to one side (biased); 50% is no position bias`
      : `too few answers to tell (n=${fmtInt(n)}; ${POSITION_MIN_ANSWERS}+ decided answers needed)`;
  }
  return `${fmtInt(n)} decided answers; 50% is no position bias${biased ? " (biased)" : ""}`;
}

/** The latest reward-model point of the learning curve, if any run measured pairwise accuracy. */
export function latestPairwise(curve: readonly CurvePoint[]): CurvePoint | null {
  const points = curve.filter((p) => p.pairwise_accuracy !== undefined && p.pairwise_accuracy !== null);
  return points.length ? points[points.length - 1]! : null;
}

/** A trained run as the reward figure names it when no run measured a held-out accuracy. */
export interface TrainedRun {
  id: number;
  label_count: number;
}

/** The reward figure's note without a measured point: a trained model is no missing model. */
function unmeasuredNote(run: TrainedRun | null | undefined): string {
  if (!run) return "no trained reward model yet";
  return (
    `run #${run.id} (${plural(run.label_count, "preference")}) is trained but not measured: ` +
    "no held-out pairs yet (see the learning curve)"
  );
}

/** `trained`: the active run, named when no run measured a held-out accuracy. */
export function compareFigures(
  c: CompareStats,
  curve: readonly CurvePoint[],
  trained: TrainedRun | null = null,
): CompareFigure[] {
  const model = latestPairwise(curve);
  const bias = c.position_bias_left;
  return [
    {
      key: "gold",
      label: "gold pairs answered right",
      value: fmtShare(c.gold_accuracy),
      note: c.gold_accuracy.n ? `${plural(c.gold_accuracy.n, "answer")} on gold pairs` : "no answers on gold pairs yet",
    },
    {
      key: "agreement",
      label: "agreement on pairs",
      value: fmtShare(c.agreement),
      note: c.agreement.n ? `${fmtInt(c.agreement.n)} annotator pairs on the same pair` : "no pair answered twice yet",
    },
    {
      key: "grading",
      label: "agreement with graded answers",
      value: fmtShare(c.agreement_with_grading),
      note: c.agreement_with_grading.n
        ? `preferred the right answer, ${fmtInt(c.agreement_with_grading.n)} ${c.agreement_with_grading.n === 1 ? "answer" : "answers"} on right-vs-wrong pairs`
        : "no answer yet on a pair with one right and one wrong answer",
    },
    {
      key: "position",
      label: "chose the left candidate",
      value: fmtShare(bias),
      note: positionNote(bias),
      warn: positionBiased(bias),
    },
    {
      key: "reward",
      label: "reward model, held-out pairwise accuracy",
      value: model ? fmtScore(model.pairwise_accuracy, model.pairwise_accuracy_ci) : "—",
      note: model
        ? `run #${model.run}, ${plural(model.label_count, "preference")}, ${fmtInt(model.n_pairs)} held-out pair${model.n_pairs === 1 ? "" : "s"}; 0.5 is chance`
        : unmeasuredNote(trained),
    },
  ];
}

/** The sentence under a compare project's learning curve. */
export function compareCurveNote(p: CurvePoint): { text: string; tooSmall: boolean } {
  const n = p.n_pairs ?? 0;
  const tooSmall = n < 30;
  return {
    text:
      `Latest point (run #${p.run}, ${fmtInt(p.label_count)} preferences): pairwise accuracy ` +
      `${fmtScore(p.pairwise_accuracy, p.pairwise_accuracy_ci)} (95% interval in brackets) on ${fmtInt(n)} held-out pairs` +
      (tooSmall ? ": too few to mean much (30+ pairs)." : "."),
    tooSmall,
  };
}

/** When the open pairs will have their preferences at the team's pace, or why nothing is queued.
 * `solutions`: the project's solutions, to tell "nothing imported" from "nothing to pair". */
export function pairQueueFigure(p: PairProgress, solutions = 0): Figure {
  if (p.preferences_remaining > 0) {
    if ((p.eta_hours === null || p.eta_hours === undefined) && p.preferences === 0) {
      return { label: "queue done in", value: DASH, note: "no preferences yet: the estimate starts with the team's first ones" };
    }
    return {
      label: "queue done in",
      value: fmtEta(p.eta_hours, p.preferences_remaining, "preferences", p.pace.labels),
      note: fmtPace(p.pace, "preferences"),
    };
  }
  if (p.pairs_total === 0) {
    // solutions came in, but no problem has two of them: importing more of the same kind will not help
    const note = solutions
      ? `no pairs: none of the ${plural(solutions, "solution")} has another of its problem to pair with (import two or more per problem)`
      : "no pairs yet: import solutions to pair";
    return { label: "queue", value: "empty", note };
  }
  return { label: "queue", value: "done", note: "every pair has the preferences it needs" };
}

/** A compare project's progress: its queue serves pairs, so the figures count pairs and preferences. */
export function pairProgressFigures(p: PairProgress, solutions = 0): Figure[] {
  return [
    {
      label: "pairs answered",
      value: `${fmtInt(p.pairs_answered)} / ${fmtInt(p.pairs_total)}`,
      note: fmtPct(p.pairs_total ? p.pairs_answered / p.pairs_total : null),
    },
    { label: p.pairs_open === 1 ? "pair open" : "pairs open", value: fmtInt(p.pairs_open), note: `${plural(p.preferences_remaining, "preference")} to go` },
    { label: "preferences", value: fmtInt(p.preferences), note: "answers on pairs, gold pairs included" },
    pairQueueFigure(p, solutions),
  ];
}
