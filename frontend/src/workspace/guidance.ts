/** The line under the steps that says what to do next, with key names from the key map. */
import {
  currentIndex,
  finishReason,
  flagTarget,
  type LabelingState,
  lastChange,
  type Mode,
  missingCritique,
  needsHumanStep,
  rateableCount,
  ratedCount,
  type StepLabel,
  unratedWritten,
} from "../labeling/state";
import { keyFor } from "./keymap";

/** `keys`: whether the single-key shortcuts are on; off, the line names the buttons, no key. */
export function guidance(s: LabelingState, submitting: boolean, keys = true): string {
  if (submitting) return "Submitting…";
  if (!keys) return buttonGuidance(s);
  const k = {
    neg: keyFor("rate-negative"),
    neu: keyFor("rate-neutral"),
    pos: keyFor("rate-positive"),
    flag: keyFor("flag"),
    alt: keyFor("write-alternative"),
    human: keyFor("write-human"),
    next: keyFor("next-step"),
    submit: keyFor("submit"),
    critique: keyFor("write-critique"),
    undo: keyFor("undo"),
  };
  const rateKeys = `${k.neg}/${k.neu}/${k.pos}`;
  const missing = missingCritique(s);
  if (missing !== null) {
    return `Step ${missing + 1} is Negative: this project needs your critique of it. Press ${k.critique}, write what is wrong, Enter saves.`;
  }
  const reason = finishReason(s);
  if (reason === "solution") return `Every step is rated. Press ${k.submit} to submit (finish: solution).`;
  if (reason === "found_error") {
    return (
      `You found the error: press ${k.submit} to submit (finish: found error), or first rate alternatives here ` +
      `(${k.alt} to write one), write the corrected step (${k.human}) or say what is wrong (${k.critique}).`
    );
  }
  if (needsHumanStep(s)) {
    // In the box keys type there: name no shortcut but the way out.
    if (s.focus.kind === "human") {
      return `Nothing here is Positive: type your own step in the box, then Enter to save it (Esc leaves the box; ${k.undo} then undoes the rating).`;
    }
    return `Nothing here is Positive: write your own step (${k.human}) or another alternative (${k.alt}), then Enter to save it.`;
  }
  const cur = currentIndex(s);
  if (cur !== null && s.labels[cur].rating !== null && s.mode === "phase1") {
    return `Rate the alternatives (${rateKeys}), or press ${k.next} to move on.`;
  }
  if (s.labels.some((l) => l.alternatives.some((a) => !a.offered && a.rating === null))) {
    return `Rate the alternative you wrote (${rateKeys}) before submitting.`;
  }
  const last = flagTarget(s);
  const where = last === null ? "" : `step ${last.step + 1}${last.alt === null ? "" : `, alternative ${last.alt + 1}`}`;
  const unsure = last === null ? "" : ` ${k.flag} flags your last rating (${where}).`;
  return `Rate the highlighted step: ${k.neg} Negative · ${k.neu} Neutral · ${k.pos} Positive.${unsure}`;
}

/** The footer with the single-key shortcuts off: what to press, by its button, never a key that does nothing. */
function buttonGuidance(s: LabelingState): string {
  const missing = missingCritique(s);
  if (missing !== null) {
    return `Step ${missing + 1} is Negative: this project needs your critique of it. Press its Critique button, write what is wrong, and save it.`;
  }
  const reason = finishReason(s);
  if (reason === "solution") return "Every step is rated. Press Submit (finish: solution).";
  if (reason === "found_error") {
    return (
      "You found the error: press Submit (finish: found error), or first rate alternatives here, write one, " +
      "write the corrected step or say what is wrong (Critique)."
    );
  }
  if (needsHumanStep(s)) {
    if (s.focus.kind === "human") return "Nothing here is Positive: type your own step in the box, then save it.";
    return "Nothing here is Positive: write your own step (Write corrected step) or another alternative (Write alternative), then save it.";
  }
  const cur = currentIndex(s);
  if (cur !== null && s.labels[cur].rating !== null && s.mode === "phase1") {
    return "Rate the alternatives here with their buttons, or press Next step to move on.";
  }
  if (s.labels.some((l) => l.alternatives.some((a) => !a.offered && a.rating === null))) {
    return "Rate the alternative you wrote before submitting.";
  }
  return "Rate the highlighted step: Negative, Neutral or Positive.";
}

/** The bar's position ("Step 2 of 3 · 1 rated"). Steps only shown (a trace's observations) are
 * not counted as rated or to rate: "All 5 steps rated" came after 4 ratings. */
export function positionText(s: LabelingState): string {
  const cur = currentIndex(s);
  const total = s.steps.length;
  const toRate = rateableCount(s);
  if (cur === null) return toRate === total ? `All ${total} steps rated` : `All ${toRate} steps to rate are rated`;
  const rated = toRate === total ? `${ratedCount(s)} rated` : `${ratedCount(s)} of ${toRate} rated`;
  return `Step ${cur + 1} of ${total} · ${rated}`;
}

const DONE: Record<string, string> = {
  give_up: "Given up: recorded with your reason.",
  bad_problem: "Reported as a bad problem.",
};

/** What the status line says once a submit is acknowledged: a give-up is not "Submitted". */
export function submittedMessage(finishReason: string, hasNext: boolean): string {
  const done = DONE[finishReason] ?? "Submitted.";
  return hasNext ? `${done} Here is the next solution.` : done;
}

export const EMPTY_TEXT = "Everything available to you is labeled or taken. New work appears as the queue refills.";
export const SCREENING_FAILED_TEXT =
  "You did not pass this project's screening, so it serves you no more tasks. Ask a lead if you think that is a mistake.";

/** Why the queue is empty: screening comes first, so one still pending with no screening question
 * left for the annotator (too few in the project) empties it as surely as a finished queue. */
export function emptyQueueText(screening: { required: number; submitted: number; status: string }): string {
  // failed is final: "new work appears as the queue refills" and Check again said otherwise
  if (screening.status === "failed") return SCREENING_FAILED_TEXT;
  if (screening.status !== "pending" || screening.required <= 0) return EMPTY_TEXT;
  return (
    `This project asks for ${screening.required} screening answers before regular work, and you have given ` +
    `${screening.submitted}; no screening question is open for you right now. Ask a lead: the project may have ` +
    "too few screening questions."
  );
}

/** Why a rating key changed nothing (it did so silently; a phase-1 step rated Neutral left the
 * annotator guessing that Backspace comes first). Backspace is named with what it would really
 * undo: "undoes that rating" after a corrected step was written took the step, not the rating. */
export function unrateableWhy(s: LabelingState): string | null {
  const cur = currentIndex(s);
  if (cur === null) return `Nothing is left to rate: press ${keyFor("submit")} to submit.`;
  if (s.focus.kind !== "main") return null; // an alternative given the rating it has: nothing to say
  const waiting = s.labels[cur].alternatives.findIndex((a) => a.rating === null);
  if (waiting !== -1) {
    return `Step ${cur + 1} is rated already; alternative ${waiting + 1} waits for a rating: move to it with ${keyFor("focus-next")}, then rate it.`;
  }
  const undoKey = keyFor("undo");
  const change = lastChange(s);
  const rated = `Step ${cur + 1} is rated already`;
  const what =
    change === null
      ? rated // a resumed draft keeps only so much undo
      : change === `your rating of step ${cur + 1}`
        ? `${rated}: ${undoKey} undoes that rating`
        : `${rated}. ${undoKey} undoes your last change first (${change}), not the rating`;
  if (needsHumanStep(s)) return `${what}, or write your own step (${keyFor("write-human")}) or another alternative (${keyFor("write-alternative")}).`;
  return `${what}.`;
}

/** The line over the steps that says what the project's mode asks; phase 2, the default that the
 * footer walks through, needs none. Phase 1 was never named, so its keys went unexplained. */
export function modeNote(mode: Mode, keys = true): string | null {
  if (mode !== "phase1") return null;
  if (!keys) {
    return (
      "Phase 1: rate each step and the alternatives offered with it. Where none of them is Positive, write the " +
      "step yourself or another alternative and rate it; Next step goes on to the next step once something here is Positive."
    );
  }
  return (
    "Phase 1: rate each step and the alternatives offered with it. Where none of them is Positive, write the " +
    `step yourself (${keyFor("write-human")}) or another alternative (${keyFor("write-alternative")}) and rate it; ` +
    `${keyFor("next-step")} goes on to the next step once something here is Positive.`
  );
}

/** Why the next-step key changed nothing (it only repeated the footer's hint). */
export function nextStepWhy(s: LabelingState, keys = true): string {
  if (!keys) return nextStepWhyByButtons(s);
  const key = keyFor("next-step");
  if (s.mode !== "phase1") return `${key} is a phase 1 key: in this project rating a step moves on by itself.`;
  const cur = currentIndex(s);
  if (cur === null) return `Nothing is left to rate: press ${keyFor("submit")} to submit.`;
  const n = cur + 1;
  if (s.labels[cur].rating === null) {
    return `Rate step ${n} first (${keyFor("rate-negative")}/${keyFor("rate-neutral")}/${keyFor("rate-positive")}); ${key} moves on once something here is Positive.`;
  }
  if (unratedWritten(s.labels[cur])) {
    return `Rate the alternative you wrote at step ${n} first (${keyFor("focus-next")} reaches it); then ${key} moves on.`;
  }
  const own = `write your own step (${keyFor("write-human")}) or another alternative (${keyFor("write-alternative")})`;
  if (needsHumanStep(s)) return `Nothing at step ${n} is Positive, so ${key} cannot move on yet: ${own}.`;
  return `Nothing at step ${n} is Positive yet, so ${key} cannot move on: rate the alternatives (${keyFor("focus-next")}), or ${own}.`;
}

/** nextStepWhy with the single-key shortcuts off: the Next step button's answer, naming buttons. */
function nextStepWhyByButtons(s: LabelingState): string {
  if (s.mode !== "phase1") return "Next step is for phase 1: in this project rating a step moves on by itself.";
  const cur = currentIndex(s);
  if (cur === null) return "Nothing is left to rate: press Submit.";
  const n = cur + 1;
  if (s.labels[cur].rating === null) return `Rate step ${n} first; Next step moves on once something here is Positive.`;
  if (unratedWritten(s.labels[cur])) return `Rate the alternative you wrote at step ${n} first; then Next step moves on.`;
  const own = "write your own step (Write your own step) or another alternative (Write alternative)";
  if (needsHumanStep(s)) return `Nothing at step ${n} is Positive, so Next step cannot move on yet: ${own}.`;
  return `Nothing at step ${n} is Positive yet, so Next step cannot move on: rate the alternatives, or ${own}.`;
}

const RATING_WORDS: Record<string, string> = { "-1": "Negative", "0": "Neutral", "1": "Positive" };

/** What one change of the labels did, in words for a screen reader ("Step 1 rated Positive.",
 * "Undone: your rating of step 2."). A key that leaves focus where it was (a flag, a Negative that
 * ends the pass, an alternative's rating, an undo) changed only the focused step's text, which a
 * screen reader does not read out; null when the labels did not change. */
export function describeChange(was: LabelingState, now: LabelingState): string | null {
  if (was.labels === now.labels) return null;
  if (now.past.length < was.past.length) return `Undone: ${lastChange(was) ?? "your last change"}.`;
  for (let i = 0; i < now.labels.length; i++) {
    const what = labelNews(was.labels[i], now.labels[i], i + 1, now.mode);
    if (what !== null) return `${what}.`;
  }
  return null;
}

function labelNews(was: StepLabel, now: StepLabel, n: number, mode: Mode): string | null {
  if (was.rating !== now.rating) {
    return now.rating === null ? `Rating of step ${n} removed` : `Step ${n} rated ${RATING_WORDS[String(now.rating)]}`;
  }
  if (now.alternatives.length > was.alternatives.length) return `Alternative ${now.alternatives.length} written at step ${n}`;
  if (now.alternatives.length < was.alternatives.length) return `An alternative at step ${n} removed`;
  for (let j = 0; j < now.alternatives.length; j++) {
    const a = now.alternatives[j];
    const b = was.alternatives[j];
    if (a.rating !== b.rating) {
      return a.rating === null
        ? `Rating of alternative ${j + 1} at step ${n} removed`
        : `Alternative ${j + 1} at step ${n} rated ${RATING_WORDS[String(a.rating)]}`;
    }
    if (a.flagged !== b.flagged) {
      return a.flagged ? `Alternative ${j + 1} at step ${n} flagged as unsure` : `Flag removed from alternative ${j + 1} at step ${n}`;
    }
    if (a.text !== b.text) return `Alternative ${j + 1} at step ${n} rewritten`;
  }
  if (was.human !== now.human) {
    const own = mode === "phase1" ? `Your own step at step ${n}` : `Corrected step ${n}`;
    return now.human === null ? `${own} removed` : `${own} written`;
  }
  if ((was.critique ?? null) !== (now.critique ?? null)) {
    return now.critique ? `Critique of step ${n} written` : `Critique of step ${n} removed`;
  }
  if (was.flagged !== now.flagged) return now.flagged ? `Step ${n} flagged as unsure` : `Flag removed from step ${n}`;
  if (was.done !== now.done) return now.done ? `Moved on from step ${n}` : `Back at step ${n}`;
  return null;
}

/** Why `a` or `c` opened no box: they write at a step rated Negative (phase 2) or rated at all
 * (phase 1); before that they did nothing, without a word, while every other dead key says why. */
export function writerWhy(s: LabelingState, kind: "human" | "newalt"): string {
  const key = keyFor(kind === "newalt" ? "write-alternative" : "write-human");
  const what = kind === "newalt" ? "an alternative step" : s.mode === "phase1" ? "your own step" : "the corrected step";
  const cur = currentIndex(s);
  if (cur === null) return `Nothing is left to rate, so ${key} has no step to write at: press ${keyFor("submit")} to submit.`;
  const n = cur + 1;
  if (s.mode === "phase1") return `Rate step ${n} first; then ${key} writes ${what} there.`;
  return `${key} writes ${what} at a step you rate Negative (${keyFor("rate-negative")}): step ${n} is not rated yet.`;
}
