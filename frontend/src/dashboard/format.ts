/** Pure formatting and data shaping for the dashboard (unit-tested; no DOM). */
import type { AnnotatorRow, CurvePoint, GenerationProgress, HeldOut, Pace, Progress } from "../api/types";

export const DASH = "—";

/** Short local date and time, "30 Nov, 23:35", with the year when it is not this one ("24 Dec 2022,
 * 05:01": an imported PRM800K label's date read as later this month). */
export function fmtWhen(iso: string | null, now: Date = new Date()): string {
  if (!iso) return DASH;
  const at = new Date(iso);
  const year = at.getFullYear() === now.getFullYear() ? {} : { year: "numeric" as const };
  return at.toLocaleString("en-GB", { month: "short", day: "numeric", ...year, hour: "2-digit", minute: "2-digit" });
}

export function fmtInt(n: number | null | undefined): string {
  return n === null || n === undefined ? DASH : Math.round(n).toLocaleString("en-US");
}

export function fmtPct(x: number | null | undefined, digits = 1): string {
  return x === null || x === undefined ? DASH : `${(x * 100).toFixed(digits)}%`;
}

export function fmtNum(x: number | null | undefined, digits = 2): string {
  return x === null || x === undefined ? DASH : x.toFixed(digits);
}

/** Seconds as "8.5 s", "2 min 05 s" or "1 h 02 min". */
export function fmtSeconds(s: number | null | undefined): string {
  if (s === null || s === undefined) return DASH;
  if (s < 60) return `${s.toFixed(1)} s`;
  const total = Math.round(s);
  if (total < 3600) return `${Math.floor(total / 60)} min ${String(total % 60).padStart(2, "0")} s`;
  const minutes = Math.round(total / 60);
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, "0")} min`;
}

/**
 * The queue's ETA: hours of labeling at the team's pace; null when the last 7 days had no labels,
 * or too few (`recent` of them) to extrapolate from.
 */
export function fmtEta(hours: number | null | undefined, remaining: number, noun = "labels", recent = 0): string {
  if (remaining === 0) return "queue done";
  if (hours === null || hours === undefined) return recent ? `too few ${noun} to tell` : `no ${noun} in the last 7 days`;
  if (hours < 1) return `about ${Math.max(1, Math.round(hours * 60))} min`;
  if (hours < 48) return `about ${hours.toFixed(hours < 10 ? 1 : 0)} h`;
  return `about ${(hours / 24).toFixed(hours < 240 ? 1 : 0)} days`;
}

export interface Figure {
  label: string;
  value: string;
  note?: string;
}

/**
 * The queue figure: when the open solutions will have their labels at the team's pace, or why
 * nothing is queued (no solutions yet; every solution arrived labeled in an import; all labeled).
 * A compare project's queue serves pairs: its figure is pairQueueFigure (compare.ts).
 */
export function queueFigure(p: Progress): Figure {
  if (p.labels_remaining > 0) {
    if ((p.eta_hours === null || p.eta_hours === undefined) && p.labels === p.labels_imported) {
      return { label: "queue done in", value: DASH, note: "no labels here yet: the estimate starts with the team's first ones" };
    }
    return {
      label: "queue done in",
      value: fmtEta(p.eta_hours, p.labels_remaining, "labels", p.pace.labels),
      note: fmtPace(p.pace),
    };
  }
  if (p.solutions_total === 0) return { label: "queue", value: "empty", note: "no solutions yet: import some to label" };
  if (p.labels > 0 && p.labels_imported === p.labels) {
    const all = p.solutions_total === 1 ? "the one solution" : `all ${fmtInt(p.solutions_total)} solutions`;
    return { label: "queue", value: "empty", note: `${all} arrived labeled in an import: import unlabeled ones to label here` };
  }
  return { label: "queue", value: "done", note: "every solution has the labels it needs" };
}

/** The note under "steps labeled": in how many labels, and how many steps are still queued. */
export function stepsNote(p: Progress, alternatives = 0): string {
  const labels = `in ${fmtInt(p.labels)} label${p.labels === 1 ? "" : "s"}`;
  // Steps of the solutions; rated alternatives are step labels too, which the model's counts include.
  const alts = alternatives ? `, plus ${plural(alternatives, "rated alternative")} (the model's step labels count them)` : "";
  return `${labels}${alts} · ${fmtInt(p.steps_open)} of ${fmtInt(p.steps_total)} solution steps still queued`;
}

/**
 * What the ETA rests on: labels (or a compare project's preferences) per hour of active labeling,
 * the annotators' timed work merged (see the API's Pace), or why there is no estimate.
 */
export function fmtPace(p: Pace, noun = "labels"): string {
  const days = `last ${Math.round(p.window_hours / 24)} days`;
  const count = `${fmtInt(p.labels)} ${p.labels === 1 ? noun.replace(/s$/, "") : noun}`;
  if (!p.labels) return `no queue ${noun} in the ${days}`;
  if (p.labels < p.min_labels) return `only ${count} in the ${days}: the estimate needs ${fmtInt(p.min_labels)}`;
  if (!p.active_hours) return `${count} in the ${days}, but no labeling time recorded`;
  const rate = p.labels_per_hour >= 100 ? fmtInt(p.labels_per_hour) : fmtNum(p.labels_per_hour, 1);
  return `at ${rate} ${noun} per hour of labeling (${count} in ${fmtSeconds(p.active_hours * 3600)} of active labeling time, ${days})`;
}

/**
 * Legend lines for progress by generation. Solutions count under their own generation, labels under
 * the generation they were served in (solutions without one are served in the current one), so every
 * generation with either is listed: the labels and steps of the lines add up to the headline.
 * Imported labels keep the generation their file gave them (PRM800K numbers its own rounds).
 */
export function generationLines(rows: readonly GenerationProgress[]): string[] {
  return rows
    .filter((g) => g.solutions > 0 || g.labels > 0)
    .map((g) => {
      const parts: string[] = [];
      // a solution sits under the generation that queued it last; its labels may be older
      if (g.solutions > 0) parts.push(`${fmtInt(g.labeled)} of ${plural(g.solutions, "solution")} labeled at least once`);
      const served = g.labels - g.imported_labels;
      const steps = `${fmtInt(g.steps_labeled)} step${g.steps_labeled === 1 ? "" : "s"}`;
      // Labeled solutions of a bucket without labels: their labels sit under the generation that
      // served them (a solution no model ordered yet is served in the current one).
      if (g.labels === 0) parts.push(g.labeled > 0 ? "their labels count under the generation that served them" : "no labels served");
      else if (served === 0) parts.push(`${fmtInt(g.labels)} label${g.labels === 1 ? "" : "s"} imported, ${steps}`);
      else if (g.imported_labels === 0) parts.push(`${fmtInt(served)} label${served === 1 ? "" : "s"} served, ${steps}`);
      else parts.push(`${fmtInt(served)} label${served === 1 ? "" : "s"} served, ${fmtInt(g.imported_labels)} imported, ${steps}`);
      // labels served in a generation that holds no solution (it served imported ones) have no
      // bar of their own; an imported file's round numbers say "(imported)" already
      const label = generationLabel(g);
      const barless = g.solutions === 0 && !label.endsWith("(imported)") ? " (no solutions of its own)" : "";
      return `${label}${barless}: ${parts.join("; ")}`;
    });
}

/**
 * The same legend for a compare project. Pairs are queued there, never a solution, so every
 * solution sits in the one bucket without a generation ("all solutions"); the step labels its
 * first-wrong marks made count under the generation their pair was served in, imported ones under
 * the generation their file gave them.
 */
export function compareGenerationLines(rows: readonly GenerationProgress[]): string[] {
  return rows
    .filter((g) => g.solutions > 0 || g.labels > 0)
    .map((g) => {
      const parts: string[] = [];
      if (g.solutions > 0) parts.push(`${fmtInt(g.labeled)} of ${plural(g.solutions, "solution")} with a step label`);
      const marks = g.labels - g.imported_labels;
      const made: string[] = [];
      if (marks > 0) made.push(`${plural(marks, "step label")} from first-wrong marks`);
      if (g.imported_labels > 0) made.push(`${plural(g.imported_labels, "label")} imported`);
      if (made.length) parts.push(`${made.join(", ")}, ${plural(g.steps_labeled, "step")}`);
      else if (g.labeled > 0) parts.push("their labels count under the generation their pair was served in");
      return `${compareGenerationLabel(g)}: ${parts.join("; ")}`;
    });
}

/** A compare project's bucket name: "all solutions" (none is queued), "pairs served in gen 2", or
 * "gen 6 (imported)" for a file's own round numbers. */
export function compareGenerationLabel(g: GenerationProgress): string {
  if (g.generation === null) return "all solutions";
  const imported = g.labels > 0 && g.imported_labels === g.labels;
  return imported ? `gen ${g.generation} (imported)` : `pairs served in gen ${g.generation}`;
}

/** The same note for a compare project, whose solutions are never queued (its pairs are). */
export function compareGenerationsNote(p: { labels: number; labels_imported: number; steps_labeled: number }): string {
  return (
    "A compare project queues pairs, not solutions, so its solutions carry no generation; the step labels of " +
    "first-wrong marks count under the generation their pair was served in" +
    (p.labels_imported ? ", imported labels under the generation their file gave them" : "") +
    `. Preferences are counted above. Together: ${plural(p.labels, "step label")}, ${plural(p.steps_labeled, "step")}.`
  );
}

/** The quality table's screening cell: "passed (90.0%)", "pending", "not required" (the project
 * asks for no screening), or a dash for an annotator with no status yet. */
export function screeningText(r: Pick<AnnotatorRow, "screening_status" | "screening_agreement">): string {
  if (!r.screening_status) return DASH;
  const agreement = r.screening_agreement === null || r.screening_agreement === undefined ? "" : ` (${fmtPct(r.screening_agreement)})`;
  return r.screening_status.replaceAll("_", " ") + agreement;
}

/** Why an annotator's row is flagged, in words beside its red background ("flagged: gold accuracy
 * below 80%", "flagged: failed screening"), or null for a row that is not. Mirrors the server's rule
 * (annotate/selectors/stats/quality.py): accuracy under the threshold over at least `minGold` gold
 * answers, or failed screening. */
export function flagNote(
  r: Pick<AnnotatorRow, "below_threshold" | "gold_accuracy" | "gold_solutions" | "screening_status">,
  threshold: number,
  minGold: number,
): string | null {
  if (!r.below_threshold) return null;
  const reasons: string[] = [];
  const accuracy = r.gold_accuracy;
  if (accuracy !== null && accuracy !== undefined && (r.gold_solutions ?? 0) >= minGold && accuracy < threshold)
    reasons.push(`gold accuracy below ${fmtPct(threshold, 0)}`);
  if (r.screening_status === "failed") reasons.push("failed screening");
  return reasons.length ? `flagged: ${reasons.join(", ")}` : "flagged";
}

/** "1 label", "2 labels": a count with its noun. */
export function plural(n: number, noun: string): string {
  return `${fmtInt(n)} ${noun}${n === 1 ? "" : "s"}`;
}

/** A generation's name, marked "(imported)" when all its labels came from an import file: its
 * number is the file's (e.g. PRM800K's rounds), not one of this project's models. */
export function generationLabel(g: GenerationProgress): string {
  const imported = g.labels > 0 && g.imported_labels === g.labels;
  return imported && g.generation !== null ? `${generationName(g.generation)} (imported)` : generationName(g.generation);
}

/** A held-out score with its 95% interval when the run stored one: "0.630 (0.58–0.68)". */
export function fmtScore(value: number | null | undefined, ci?: readonly number[] | null): string {
  if (value === null || value === undefined) return DASH;
  return ci && ci.length === 2 ? `${value.toFixed(3)} (${ci[0].toFixed(2)}–${ci[1].toFixed(2)})` : value.toFixed(3);
}

/** The held-out set's size, and a plain warning when it is too small for its scores to mean anything. */
export function heldoutSize(h: HeldOut): { text: string; tooSmall: boolean } {
  if (h.n_steps === undefined) return { text: "held-out size not recorded", tooSmall: false };
  const solutions = h.n_solutions === undefined ? "" : `, ${plural(h.n_solutions, "solution")}`;
  const size = `${plural(h.n_steps, "held-out step")}${solutions}`;
  return h.too_small
    ? { text: `${size}: too small to mean anything (scores need 50+ steps and 10+ solutions)`, tooSmall: true }
    : { text: size, tooSmall: false };
}

/** A run's held-out size in the runs table: its steps, and its solutions where the run recorded them
 * (a set of 80 steps is too small by its 9 solutions: "80 steps (too small)" beside "50+ steps"
 * read as a contradiction). */
export function heldoutCell(h: Pick<HeldOut, "n_steps" | "n_solutions">): string {
  if (h.n_steps === undefined) return DASH;
  const solutions = h.n_solutions === undefined ? "" : `, ${plural(h.n_solutions, "solution")}`;
  return `${plural(h.n_steps, "step")}${solutions}`;
}

/** Below this many solutions labeled twice (or annotation pairs), agreement swings with one label. */
export const AGREEMENT_MIN = 20;

/** The notes under the agreement figures: how many solutions and pairs they rest on, and a warning
 * while that is too few to read (α over 1 solution reads 0.00 or 1.00 by chance). */
export function agreementNotes(solutions: number, pairs: number, sample = ""): { alpha: string; pairs: string } {
  const few = ` — too few to mean much (${AGREEMENT_MIN}+ needed)`;
  return {
    alpha: `over ${plural(solutions, "solution")}${sample}${solutions > 0 && solutions < AGREEMENT_MIN ? few : ""}`,
    pairs: `${plural(pairs, "annotation pair")}${pairs > 0 && pairs < AGREEMENT_MIN ? few : ""}`,
  };
}

export function toUnixSeconds(isoTimes: readonly string[]): number[] {
  return isoTimes.map((t) => Date.parse(t) / 1000);
}

export interface Named {
  annotator: string;
  labels: number[];
}

/** The k busiest annotators of a series (the API sorts them, busiest first), skipping idle ones. */
export function busiest(rows: readonly Named[], k: number): Named[] {
  return rows.filter((r) => r.labels.some((n) => n > 0)).slice(0, k);
}

export function generationName(g: number | null): string {
  // null: queued by import or by a model-free order, never by a model's scores
  return g === null ? "queued without a model" : `gen ${g}`;
}

/** Share of each value in the total, for bar legends: [[label, value, share]]. */
export function shares(labels: readonly string[], values: readonly number[]): [string, number, number | null][] {
  const total = values.reduce((a, b) => a + b, 0);
  return labels.map((label, i) => [label, values[i] ?? 0, total ? (values[i] ?? 0) / total : null]);
}

export const METRIC_NAMES: Record<string, string> = {
  auroc_negative: "AUROC (−1 steps)",
  accuracy: "Step accuracy",
  first_error_f1: "First-error F1",
  ece: "ECE (lower is better)",
  pairwise_accuracy: "Pairwise accuracy (reward model)",
};

/** The sentence under the learning curve about its latest point: scores, intervals, held-out size. */
export function curveNote(p: CurvePoint): { text: string; tooSmall: boolean } {
  const head = `Latest point (run #${p.run}, ${fmtInt(p.label_count)} step labels)`;
  const acc = fmtScore(p.accuracy, p.accuracy_ci);
  const f1 = fmtScore(p.first_error_f1, p.first_error_f1_ci);
  if (p.n_steps === undefined) {
    return {
      text: `${head}: step accuracy ${acc}, first-error F1 ${f1} (trained before held-out sizes and intervals were recorded).`,
      tooSmall: false,
    };
  }
  const size = heldoutSize(p);
  return {
    text:
      `${head}: step accuracy ${acc}, first-error F1 ${f1} (95% intervals in brackets), on ${size.text}.` +
      gradeOnlyNote(p),
    tooSmall: size.tooSmall,
  };
}

/** The PRM's first-error F1 against a reader with no PRM (ml/prm/floor.py: one constant first
 * error per graded answer, fitted on the training solutions), on the same held-out solutions;
 * empty for runs trained before it was recorded. */
export function gradeOnlyNote(p: { first_error_f1?: number; grade_only_f1?: number }): string {
  if (p.grade_only_f1 === undefined || p.first_error_f1 === undefined) return "";
  const diff = p.first_error_f1 - p.grade_only_f1;
  const beyond =
    Math.abs(diff) < 0.0005
      ? "the PRM reads no more than that"
      : diff > 0
        ? `the PRM reads ${diff.toFixed(3)} more`
        : `the PRM reads ${(-diff).toFixed(3)} less: it places first errors worse than a constant does`;
  return (
    ` Without a model, the graded answer alone (one constant first error per grade) scores ${p.grade_only_f1.toFixed(3)} ` +
    `first-error F1 on these solutions; ${beyond}.`
  );
}

/** A warning when screening asks for more answers than the project has screening questions:
 * annotators who have not passed then wait with nothing to label (the claim serves screening
 * first). Empty when screening is off or the questions suffice. */
export function screeningShortage(q: { screening_required: number; screening_questions: number }): string {
  if (q.screening_required <= 0 || q.screening_questions >= q.screening_required) return "";
  return (
    `Screening asks each annotator for ${plural(q.screening_required, "answer")} before regular work, but the ` +
    `project has ${plural(q.screening_questions, "screening question")}: annotators who have not passed get ` +
    "nothing to label. Import screening questions or lower the requirement (admin, the project's Screening required)."
  );
}

/**
 * A signed interval of labels saved against random, in the words of its point estimate: "fewer"
 * and "more" step labels than random needed, never a bare minus sign (-366 next to "211 more"
 * read as the opposite). [35, 366] -> "35 to 366 fewer than random"; [-366, -35] -> "35 to 366
 * more than random"; [-366, 35] -> "from 366 more to 35 fewer than random".
 */
export function savedInterval(lo: number, hi: number): string {
  const low = Math.round(lo) || 0; // -0 is 0
  const high = Math.round(hi) || 0;
  if (low >= 0) return `${fmtInt(low)} to ${fmtInt(high)} fewer than random`;
  if (high <= 0) return `${fmtInt(-high)} to ${fmtInt(-low)} more than random`;
  return `from ${fmtInt(-low)} more to ${fmtInt(high)} fewer than random`;
}

/**
 * The point estimate of labels saved against random: "211 step labels"; a cost in words, "none:
 * 211 step labels more than random would have needed", not as "-211 saved".
 */
export function savedAmount(saved: number): string {
  const n = Math.round(saved) || 0;
  if (n > 0) return plural(n, "step label");
  if (n < 0) return `none: ${plural(-n, "step label")} more than random would have needed`;
  return "none: as many step labels as random would have needed";
}

/** A local clock time, "09:05" (24 h): when the dashboard's statistics last arrived. */
export function fmtClock(d: Date): string {
  return `${String(d.getHours()).padStart(2, "0")}:${String(d.getMinutes()).padStart(2, "0")}`;
}

/**
 * The annotators table's gold cells: gold accuracy counts agreeing steps, so rating every step +1
 * keeps it high on mostly-correct gold; the first-error share shows the first errors missed.
 */
export const GOLD_FIRST_ERROR_HELP =
  "On gold and screening questions: the share of answers whose first −1 step is the one the gold label marks " +
  "(an answer that, like the gold label, marks no error counts too). Gold accuracy counts agreeing steps, so an " +
  "annotator who rates every step +1 keeps it high while missing the errors; this share shows them.";

/** "40.0%", or a dash for an annotator without gold answers. */
export function goldFirstErrorText(r: Pick<AnnotatorRow, "gold_first_error_rate" | "gold_solutions">): string {
  return r.gold_solutions ? fmtPct(r.gold_first_error_rate) : DASH;
}
