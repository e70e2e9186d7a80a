/**
 * The labeling state machine: pure functions over plain data, no DOM, no I/O.
 *
 * One state per assignment. Every action returns a new state (or the same object when the action
 * does not apply), so the UI can re-render, save drafts and undo by keeping earlier snapshots.
 *
 * Phase 2 (PRM800K default): steps are rated in order; a Negative ends the pass at that step
 * (finish reason `found_error`); the annotator may then rate alternatives there or write a
 * corrected step. Every step rated without a Negative finishes with `solution`.
 * Phase 1: alternatives may be rated at any step; a step is passed once something at it is
 * Positive or a human step is written (`human_completion`); all steps passed -> `solution`.
 */

export type Rating = -1 | 0 | 1;
export type Mode = "phase1" | "phase2";
export type FinishReason = "solution" | "found_error" | "give_up" | "bad_problem";
export type GiveUpReason = "give_up" | "bad_problem";

export const RATINGS: readonly Rating[] = [-1, 0, 1];

export type StepType = "thought" | "tool_call" | "observation" | "answer";

export interface TaskStep {
  index: number;
  text: string;
  /** Alternative completions offered by the server at this step, if any. */
  alternatives?: string[];
  /** A trace step's type. */
  type?: StepType;
  /** false: shown but not rated (a trace's observation, unless the project rates them); default true. */
  rated?: boolean;
}

/** Critiques are plain text of at most this many characters (the server's limit). */
export const MAX_CRITIQUE = 4000;

export interface AltLabel {
  text: string;
  rating: Rating | null;
  flagged: boolean;
  /** true: offered by the server (may stay unrated); false: written by the annotator (must be rated). */
  offered: boolean;
}

export interface StepLabel {
  rating: Rating | null;
  flagged: boolean;
  alternatives: AltLabel[];
  human: string | null;
  /** Phase 1 only: the annotator moved on from this step. */
  done: boolean;
  /** Why the step is rated so, in the annotator's words; absent in drafts saved before critiques. */
  critique?: string | null;
}

/** What 1/2/3 and f act on at the current step. `human` and `newalt` are the two text boxes. */
export type Focus =
  | { kind: "main" }
  | { kind: "alt"; alt: number }
  | { kind: "human" }
  | { kind: "newalt" }
  | { kind: "critique"; step: number };

/** A rating target: a step's main line (`alt` null) or one of its alternatives. */
export interface Target {
  step: number;
  alt: number | null;
}

export interface Snapshot {
  labels: StepLabel[];
  focus: Focus;
  /** The target rated last (what `f` flags); absent in drafts saved before it existed. */
  last?: Target | null;
}

export interface LabelingState {
  mode: Mode;
  steps: readonly TaskStep[];
  /** Every main-line Negative needs a critique before submitting (the project's setting). */
  critiqueRequired?: boolean;
  /** Written steps keep their first line's indentation (code, where it is meaning). */
  keepIndent?: boolean;
  labels: StepLabel[];
  focus: Focus;
  /** The target rated last: `f` flags it, since annotators rate first and then mark a rating unsure. */
  last: Target | null;
  /** Earlier snapshots, newest last: Backspace pops one. */
  past: Snapshot[];
}

/** Undo depth kept (and saved in drafts). */
export const MAX_UNDO = 100;

const MAIN: Focus = { kind: "main" };

export interface StateOptions {
  critiqueRequired?: boolean;
  keepIndent?: boolean;
}

/** Whether the annotator rates this step (trace observations may be shown only). */
export function isRatedStep(step: TaskStep): boolean {
  return step.rated !== false;
}

export function createState(mode: Mode, steps: readonly TaskStep[], opts: StateOptions = {}): LabelingState {
  return {
    mode,
    steps,
    critiqueRequired: opts.critiqueRequired ?? false,
    keepIndent: opts.keepIndent ?? false,
    labels: steps.map((step) => ({
      rating: null,
      flagged: false,
      alternatives: (step.alternatives ?? []).map((text) => ({ text, rating: null, flagged: false, offered: true })),
      human: null,
      // A step that is not rated is passed at once (phase 1 moves on past it).
      done: !isRatedStep(step),
      critique: null,
    })),
    focus: MAIN,
    last: null,
    past: [],
  };
}

// ---------------------------------------------------------------------------------------------
// Derived facts
// ---------------------------------------------------------------------------------------------

/** Phase 2: index (in steps) of the first main-line Negative, which ends the pass; else null. */
export function errorIndex(s: LabelingState): number | null {
  if (s.mode !== "phase2") return null;
  const i = s.labels.findIndex((l) => l.rating === -1);
  return i === -1 ? null : i;
}

/** The step being labeled (position in `steps`), or null when every step is through. */
export function currentIndex(s: LabelingState): number | null {
  if (s.mode === "phase2") {
    const err = errorIndex(s);
    if (err !== null) return err;
    const i = s.labels.findIndex((l, k) => l.rating === null && isRatedStep(s.steps[k]));
    return i === -1 ? null : i;
  }
  const i = s.labels.findIndex((l) => !l.done);
  return i === -1 ? null : i;
}

/** How many steps are shown: those labeled so far plus the current one. */
export function visibleCount(s: LabelingState): number {
  const cur = currentIndex(s);
  return cur === null ? s.steps.length : cur + 1;
}

/** Alternatives the annotator wrote but has not rated yet: they block completion. */
function hasUnratedWrittenAlternative(s: LabelingState): boolean {
  return s.labels.some(unratedWritten);
}

/** The finish reason the ratings imply, or null while the labeling is incomplete. */
export function finishReason(s: LabelingState): "solution" | "found_error" | null {
  if (s.steps.length === 0 || hasUnratedWrittenAlternative(s) || missingCritique(s) !== null) return null;
  if (s.mode === "phase2") {
    if (errorIndex(s) !== null) return "found_error";
    return s.labels.every((l, k) => l.rating !== null || !isRatedStep(s.steps[k])) ? "solution" : null;
  }
  return s.labels.every((l) => l.done) ? "solution" : null;
}

export function isComplete(s: LabelingState): boolean {
  return finishReason(s) !== null;
}

/** Phase 1: the current step has a Positive (main or alternative) or a written human step. */
/** An alternative written at this step that has no rating yet. */
export function unratedWritten(l: StepLabel): boolean {
  return l.alternatives.some((a) => !a.offered && a.rating === null);
}

function isResolved(l: StepLabel): boolean {
  if (l.rating === null) return false;
  if (l.rating === 1 || l.alternatives.some((a) => a.rating === 1)) return true;
  return (l.human ?? "").trim() !== "";
}

/** Phase 1: the current step must get a human step before moving on (nothing there is Positive). */
export function needsHumanStep(s: LabelingState): boolean {
  const cur = currentIndex(s);
  if (s.mode !== "phase1" || cur === null) return false;
  const l = s.labels[cur];
  return l.rating !== null && !isResolved(l) && l.alternatives.every((a) => a.rating !== null);
}

/** Whether alternatives / a written step can be added at the current step now. */
export function canAddAlternatives(s: LabelingState): boolean {
  const cur = currentIndex(s);
  if (cur === null) return false;
  const l = s.labels[cur];
  if (s.mode === "phase2") return l.rating === -1;
  return l.rating !== null;
}

/** The first step rated Negative without a critique where the project requires one; else null. */
export function missingCritique(s: LabelingState): number | null {
  if (!s.critiqueRequired) return null;
  const i = s.labels.findIndex((l) => l.rating === -1 && !(l.critique ?? "").trim());
  return i === -1 ? null : i;
}

/** The step a critique is written for: the one rated last (its main line), if it is still shown. */
export function critiqueTarget(s: LabelingState): number | null {
  const step = s.last?.step ?? null;
  if (step === null || step >= visibleCount(s) || s.labels[step].rating === null) return null;
  return step;
}

/** How many steps the annotator rates (a trace's observations are only shown). */
export function rateableCount(s: LabelingState): number {
  return s.steps.filter(isRatedStep).length;
}

export function ratedCount(s: LabelingState): number {
  return s.labels.filter((l) => l.rating !== null).length;
}

/** What Backspace would undo, in words ("your corrected step 1"); null when there is nothing to undo. */
export function lastChange(s: LabelingState): string | null {
  const prev = s.past[s.past.length - 1];
  if (!prev) return null;
  for (let i = 0; i < s.labels.length; i++) {
    const what = stepChange(prev.labels[i], s.labels[i], i + 1, s.mode);
    if (what !== null) return what;
  }
  return "your last change";
}

function stepChange(was: StepLabel, now: StepLabel, n: number, mode: Mode): string | null {
  if (was.rating !== now.rating) return `your rating of step ${n}`;
  if (was.alternatives.length !== now.alternatives.length) return `the alternative you wrote at step ${n}`;
  const alt = now.alternatives.findIndex((a, j) => a.rating !== was.alternatives[j].rating);
  if (alt !== -1) return `your rating of alternative ${alt + 1} at step ${n}`;
  const altFlag = now.alternatives.findIndex((a, j) => a.flagged !== was.alternatives[j].flagged);
  if (altFlag !== -1) return `the flag on alternative ${altFlag + 1} at step ${n}`;
  if (was.human !== now.human) return mode === "phase1" ? `your own step at step ${n}` : `your corrected step ${n}`;
  if ((was.critique ?? null) !== (now.critique ?? null)) return `your critique of step ${n}`;
  if (was.flagged !== now.flagged) return `the flag on step ${n}`;
  if (was.done !== now.done) return `moving on from step ${n}`;
  return null;
}

/** Whether anything was labeled (a rating, a flag, a written step or alternative): a draft worth resuming. */
export function hasWork(s: LabelingState): boolean {
  return s.labels.some(
    (l) =>
      l.rating !== null ||
      l.flagged ||
      l.human !== null ||
      !!l.critique ||
      l.alternatives.some((a) => !a.offered || a.rating !== null || a.flagged),
  );
}

/** What `f` flags: the rating given last; null before any rating (nothing to mark unsure yet). */
export function flagTarget(s: LabelingState): Target | null {
  return s.last;
}

// ---------------------------------------------------------------------------------------------
// Actions
// ---------------------------------------------------------------------------------------------

function cloneLabels(labels: StepLabel[]): StepLabel[] {
  return labels.map((l) => ({ ...l, alternatives: l.alternatives.map((a) => ({ ...a })) }));
}

/** A new state whose labels may be mutated freely, with the current one pushed for undo. */
function edit(s: LabelingState): LabelingState {
  const past = [...s.past, { labels: s.labels, focus: s.focus, last: s.last }];
  if (past.length > MAX_UNDO) past.splice(0, past.length - MAX_UNDO);
  return { ...s, labels: cloneLabels(s.labels), past };
}

/** Phase 1: where focus goes once the main step or an alternative has been rated. */
function phase1After(next: LabelingState, cur: number, fromAlt: number | null): LabelingState {
  const l = next.labels[cur];
  const firstAlt = fromAlt === null ? 0 : fromAlt + 1;
  const following = l.alternatives.findIndex((a, i) => i >= firstAlt && a.rating === null);
  if (following >= 0) return { ...next, focus: { kind: "alt", alt: following } };
  // One the annotator wrote earlier and left unrated is rated before the step is passed (after it,
  // nothing can rate it, and a submit refuses it).
  const unrated = l.alternatives.findIndex((a) => !a.offered && a.rating === null);
  if (unrated >= 0) return { ...next, focus: { kind: "alt", alt: unrated } };
  if (isResolved(l)) {
    l.done = true;
  }
  // Nothing Positive: the step needs the annotator's own (c) or another alternative (a). The box
  // no longer opens by itself: with the keys in it, f, a or e typed into the step instead of
  // flagging or writing as the key list says.
  return { ...next, focus: MAIN };
}

/** Rate whatever has focus at the current step (1/2/3). Only the current step can be rated. */
export function rate(s: LabelingState, rating: Rating): LabelingState {
  const cur = currentIndex(s);
  if (cur === null) return s;
  const label = s.labels[cur];
  const f = s.focus;
  if (f.kind === "main") {
    if (label.rating !== null) return s; // already rated: Backspace undoes it
    const next = { ...edit(s), last: { step: cur, alt: null } };
    next.labels[cur].rating = rating;
    if (s.mode === "phase2") {
      // A Negative ends the pass here: go to the first alternative offered, if any.
      if (rating === -1 && label.alternatives.length > 0) return { ...next, focus: { kind: "alt", alt: 0 } };
      return { ...next, focus: MAIN };
    }
    return phase1After(next, cur, null);
  }
  if (f.kind === "alt") {
    if (f.alt < 0 || f.alt >= label.alternatives.length || label.rating === null) return s;
    if (label.alternatives[f.alt].rating === rating) return s;
    const next = { ...edit(s), last: { step: cur, alt: f.alt } };
    next.labels[cur].alternatives[f.alt].rating = rating;
    if (s.mode === "phase2") {
      const alt = Math.min(f.alt + 1, label.alternatives.length - 1);
      return { ...next, focus: { kind: "alt", alt } };
    }
    return phase1After(next, cur, f.alt);
  }
  return s;
}

/** `f`: toggle the flag ("unsure") on the rating given last; nothing before any rating. */
export function toggleFlag(s: LabelingState): LabelingState {
  const t = flagTarget(s);
  return t === null ? s : toggleFlagAt(s, t);
}

/** Toggle the flag of one target (the Flag buttons): any step shown, or an alternative there. */
export function toggleFlagAt(s: LabelingState, t: Target): LabelingState {
  if (t.step < 0 || t.step >= visibleCount(s)) return s;
  const alts = s.labels[t.step].alternatives;
  if (t.alt !== null && (t.alt < 0 || t.alt >= alts.length)) return s;
  const next = edit(s);
  const l = next.labels[t.step];
  if (t.alt === null) l.flagged = !l.flagged;
  else l.alternatives[t.alt].flagged = !l.alternatives[t.alt].flagged;
  return next;
}

/** A step the annotator wrote, trimmed; with `keepIndent` (code) only its blank lines before and
 * whitespace after go: trim() took the indentation off a line of code, which changes what Python means. */
export function writtenStep(text: string, keepIndent = false): string {
  return keepIndent ? text.replace(/^(?:[ \t]*\r?\n)+/, "").trimEnd() : text.trim();
}

/** Add an alternative step written by the annotator at the current step; focus moves to it for rating. */
export function addAlternative(s: LabelingState, text: string): LabelingState {
  const cur = currentIndex(s);
  const trimmed = writtenStep(text, s.keepIndent);
  if (cur === null || trimmed === "" || !canAddAlternatives(s)) return s;
  const next = edit(s);
  const alts = next.labels[cur].alternatives;
  alts.push({ text: trimmed, rating: null, flagged: false, offered: false });
  return { ...next, focus: { kind: "alt", alt: alts.length - 1 } };
}

/**
 * Write (or clear, with empty text) the human step at the current step: the corrected step after a
 * Negative in phase 2, the annotator's own step in phase 1 (which moves on to the next step).
 */
export function setHumanStep(s: LabelingState, text: string): LabelingState {
  const cur = currentIndex(s);
  if (cur === null || !canAddAlternatives(s)) return s;
  const trimmed = writtenStep(text, s.keepIndent);
  const value = trimmed === "" ? null : trimmed;
  if (s.labels[cur].human === value) return { ...s, focus: MAIN };
  const next = edit(s);
  next.labels[cur].human = value;
  const passed = isResolved(next.labels[cur]) && !unratedWritten(next.labels[cur]);
  if (s.mode === "phase1" && value !== null && passed) next.labels[cur].done = true;
  return { ...next, focus: MAIN };
}

/** Phase 1: move on from the current step once something there is Positive (key n). */
export function nextStep(s: LabelingState): LabelingState {
  const cur = currentIndex(s);
  if (s.mode !== "phase1" || cur === null || !isResolved(s.labels[cur])) return s;
  // An alternative the annotator wrote must be rated (a submit refuses it unrated), and once the
  // step is passed it can no longer be: moving on would leave a submit that only Undo unblocks.
  if (unratedWritten(s.labels[cur])) return s;
  const next = edit(s);
  next.labels[cur].done = true;
  return { ...next, focus: MAIN };
}

/** Move focus among the current step's rating targets (main step, then alternatives). */
export function moveFocus(s: LabelingState, delta: 1 | -1): LabelingState {
  const cur = currentIndex(s);
  if (cur === null) return s;
  const n = s.labels[cur].alternatives.length;
  const pos = s.focus.kind === "alt" ? s.focus.alt + 1 : s.focus.kind === "main" ? 0 : n + 1;
  const to = Math.max(0, Math.min(n, pos + delta));
  return { ...s, focus: to === 0 ? MAIN : { kind: "alt", alt: to - 1 } };
}

/** Focus a text box (c: human step, a: new alternative), when writing is allowed at this point. */
export function focusWriter(s: LabelingState, kind: "human" | "newalt"): LabelingState {
  if (!canAddAlternatives(s)) return s;
  return { ...s, focus: { kind } };
}

export function blurWriter(s: LabelingState): LabelingState {
  if (s.focus.kind !== "human" && s.focus.kind !== "newalt" && s.focus.kind !== "critique") return s;
  return { ...s, focus: MAIN };
}

/** Open the critique box of the step rated last (key e); nothing before any rating. */
export function openCritique(s: LabelingState): LabelingState {
  const step = critiqueTarget(s);
  return step === null ? s : { ...s, focus: { kind: "critique", step } };
}

/** Save (or clear, with blank text) the critique of a rated step; focus goes back to rating. */
export function setCritique(s: LabelingState, step: number, text: string): LabelingState {
  if (step < 0 || step >= s.labels.length || s.labels[step].rating === null) return { ...s, focus: MAIN };
  const trimmed = text.trim().slice(0, MAX_CRITIQUE);
  const value = trimmed === "" ? null : trimmed;
  if ((s.labels[step].critique ?? null) === value) return { ...s, focus: MAIN };
  const next = edit(s);
  next.labels[step].critique = value;
  return { ...next, focus: MAIN };
}

/** Backspace: restore the snapshot before the last change. Focus goes back to what it was, but
 * never into a text box: a written step is saved from its box, so undoing it reopened that box
 * empty with the keys in it, and the next Backspace deleted characters instead of undoing. */
export function undo(s: LabelingState): LabelingState {
  if (s.past.length === 0) return s;
  const prev = s.past[s.past.length - 1];
  const writing = prev.focus.kind === "human" || prev.focus.kind === "newalt" || prev.focus.kind === "critique";
  const focus = writing ? MAIN : prev.focus;
  return { ...s, labels: prev.labels, focus, last: prev.last ?? null, past: s.past.slice(0, -1) };
}

// ---------------------------------------------------------------------------------------------
// Submit payload (contract of POST /api/v1/assignments/{id}/submit/)
// ---------------------------------------------------------------------------------------------

export interface PayloadAlternative {
  text: string;
  rating: Rating | null;
  flagged: boolean;
}

export interface PayloadStep {
  index: number;
  rating: Rating | null;
  flagged: boolean;
  alternatives: PayloadAlternative[];
  human_completion: string | null;
  critique?: string;
}

export interface SubmitPayload {
  idempotency_key: string;
  finish_reason: FinishReason;
  total_time_ms: number;
  reason: string;
  steps: PayloadStep[];
}

export interface PayloadOptions {
  idempotencyKey: string;
  totalTimeMs: number;
  /** Give up / bad problem, with the annotator's reason; otherwise the ratings decide. */
  giveUp?: { reason: GiveUpReason; note: string };
}

export class IncompleteLabelingError extends Error {}

export function buildPayload(s: LabelingState, opts: PayloadOptions): SubmitPayload {
  let finish: FinishReason;
  let reason = "";
  if (opts.giveUp) {
    reason = opts.giveUp.note.trim();
    if (reason === "") throw new IncompleteLabelingError("a reason is required");
    finish = opts.giveUp.reason;
  } else {
    const implied = finishReason(s);
    if (implied === null) throw new IncompleteLabelingError("the labeling is not complete");
    finish = implied;
  }
  // Steps are the labeled prefix: up to the last rated one (all of them for a solution), steps that
  // are shown but not rated going with a null rating; in phase 2 nothing after the first Negative exists.
  let end = -1;
  s.labels.forEach((l, i) => {
    if (l.rating !== null) end = i;
  });
  if (finish === "solution") end = s.labels.length - 1;
  const steps: PayloadStep[] = [];
  s.labels.forEach((l, i) => {
    if (i > end || (l.rating === null && isRatedStep(s.steps[i]))) return;
    const step: PayloadStep = {
      index: s.steps[i].index,
      rating: l.rating,
      flagged: l.flagged,
      alternatives: l.alternatives
        .filter((a) => a.rating !== null)
        .map((a) => ({ text: a.text, rating: a.rating, flagged: a.flagged })),
      human_completion: l.human,
    };
    if (l.critique && l.rating !== null) step.critique = l.critique;
    steps.push(step);
  });
  return {
    idempotency_key: opts.idempotencyKey,
    finish_reason: finish,
    total_time_ms: Math.max(0, Math.round(opts.totalTimeMs)),
    reason,
    steps,
  };
}

// ---------------------------------------------------------------------------------------------
// Drafts: what is saved in localStorage and on the server, and how it is restored
// ---------------------------------------------------------------------------------------------

export interface SavedLabels {
  labels: StepLabel[];
  focus: Focus;
  last?: Target | null;
  past: Snapshot[];
}

/** Undo depth kept in saved drafts (the server caps a draft's size). */
export const SAVED_UNDO = 30;

export function toSaved(s: LabelingState): SavedLabels {
  return { labels: s.labels, focus: s.focus, last: s.last, past: s.past.slice(-SAVED_UNDO) };
}

function isRating(v: unknown): v is Rating | null {
  return v === null || v === -1 || v === 0 || v === 1;
}

function validLabels(v: unknown, n: number): v is StepLabel[] {
  if (!Array.isArray(v) || v.length !== n) return false;
  return v.every(
    (l) =>
      l !== null &&
      typeof l === "object" &&
      isRating(l.rating) &&
      typeof l.flagged === "boolean" &&
      typeof l.done === "boolean" &&
      (l.human === null || typeof l.human === "string") &&
      (l.critique === undefined || l.critique === null || typeof l.critique === "string") &&
      Array.isArray(l.alternatives) &&
      l.alternatives.every(
        (a: unknown) =>
          a !== null &&
          typeof a === "object" &&
          typeof (a as AltLabel).text === "string" &&
          isRating((a as AltLabel).rating) &&
          typeof (a as AltLabel).flagged === "boolean" &&
          typeof (a as AltLabel).offered === "boolean",
      ),
  );
}

function validTarget(v: unknown, labels: StepLabel[]): v is Target {
  if (v === null || typeof v !== "object") return false;
  const t = v as Target;
  if (!Number.isInteger(t.step) || t.step < 0 || t.step >= labels.length) return false;
  return t.alt === null || (Number.isInteger(t.alt) && t.alt >= 0 && t.alt < labels[t.step].alternatives.length);
}

function validFocus(v: unknown): v is Focus {
  if (v === null || typeof v !== "object") return false;
  const f = v as Focus;
  if (f.kind === "alt") return Number.isInteger(f.alt) && f.alt >= 0;
  if (f.kind === "critique") return Number.isInteger(f.step) && f.step >= 0;
  return f.kind === "main" || f.kind === "human" || f.kind === "newalt";
}

/** Restore saved labels onto a fresh state; anything malformed or for other steps is ignored. */
export function restore(
  mode: Mode,
  steps: readonly TaskStep[],
  saved: unknown,
  opts: StateOptions = {},
): LabelingState {
  const fresh = createState(mode, steps, opts);
  if (saved === null || typeof saved !== "object") return fresh;
  const d = saved as Partial<SavedLabels>;
  if (!validLabels(d.labels, steps.length)) return fresh;
  const past = Array.isArray(d.past)
    ? d.past
        .filter((p) => p && validLabels(p.labels, steps.length) && validFocus(p.focus))
        .map((p) => ({ ...p, last: validTarget(p.last, p.labels) ? p.last : null }))
        .slice(-MAX_UNDO)
    : [];
  // Writer boxes are not restored with focus: the text in them was never committed.
  const focus = validFocus(d.focus) && (d.focus.kind === "main" || d.focus.kind === "alt") ? d.focus : MAIN;
  const last = validTarget(d.last, d.labels) ? d.last : null;
  return { ...fresh, labels: cloneLabels(d.labels), focus, last, past };
}
