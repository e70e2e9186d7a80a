import { describe, expect, it } from "vitest";

import {
  addAlternative,
  createState,
  lastChange,
  moveFocus,
  openCritique,
  rate,
  setCritique,
  setHumanStep,
  type TaskStep,
  toggleFlag,
  undo,
} from "../labeling/state";
import {
  describeChange,
  EMPTY_TEXT,
  emptyQueueText,
  guidance,
  modeNote,
  nextStepWhy,
  positionText,
  SCREENING_FAILED_TEXT,
  submittedMessage,
  unrateableWhy,
  writerWhy,
} from "./guidance";

const STEPS: TaskStep[] = [
  { index: 0, text: "a" },
  { index: 1, text: "b" },
];

describe("guidance", () => {
  it("says which keys rate, and where f acts once something is rated", () => {
    const s = createState("phase2", STEPS);
    expect(guidance(s, false)).toBe("Rate the highlighted step: 1 Negative · 2 Neutral · 3 Positive.");
    expect(guidance(rate(s, 1), false)).toBe(
      "Rate the highlighted step: 1 Negative · 2 Neutral · 3 Positive. f flags your last rating (step 1).",
    );
    expect(guidance(s, true)).toBe("Submitting…");
  });

  it("tells how to finish", () => {
    const done = rate(rate(createState("phase2", STEPS), 1), 1);
    expect(guidance(done, false)).toBe("Every step is rated. Press Enter to submit (finish: solution).");
    const wrong = rate(createState("phase2", STEPS), -1);
    expect(guidance(wrong, false)).toContain("You found the error: press Enter to submit");
    const written = addAlternative(wrong, "c");
    expect(guidance(written, false)).toBe("Rate the alternative you wrote (1/2/3) before submitting.");
  });

  it("asks for the annotator's own step in phase 1 when nothing is Positive", () => {
    const s = rate(createState("phase1", STEPS), 0);
    // the box does not open by itself: the keys the side panel lists keep working
    expect(s.focus.kind).toBe("main");
    expect(guidance(s, false)).toBe(
      "Nothing here is Positive: write your own step (c) or another alternative (a), then Enter to save it.",
    );
    // in the box keys type there: the hint names no shortcut but the way out
    expect(guidance({ ...s, focus: { kind: "human" } }, false)).toBe(
      "Nothing here is Positive: type your own step in the box, then Enter to save it (Esc leaves the box; Backspace then undoes the rating).",
    );
  });
});

describe("unrateableWhy", () => {
  it("says why a rating key did nothing: the step is rated, Backspace first, or a step to write", () => {
    expect(unrateableWhy(rate(createState("phase1", STEPS), 0))).toBe(
      "Step 1 is rated already: Backspace undoes that rating, or write your own step (c) or another alternative (a).",
    );
    expect(unrateableWhy(rate(createState("phase2", STEPS), -1))).toBe("Step 1 is rated already: Backspace undoes that rating.");
    expect(unrateableWhy(rate(rate(createState("phase2", STEPS), 1), 1))).toBe("Nothing is left to rate: press Enter to submit.");
  });

  it("names what Backspace would undo, and an alternative waiting for its rating", () => {
    const negative = rate(createState("phase2", STEPS), -1);
    // the walkthrough: Negative, an alternative written, a corrected step written, then 3
    const corrected = setHumanStep(addAlternative(negative, "alt"), "fixed");
    expect(unrateableWhy(corrected)).toBe(
      "Step 1 is rated already; alternative 1 waits for a rating: move to it with ↓ / j, then rate it.",
    );
    // with the alternative rated, Backspace would take the corrected step, not the rating
    const altRated = setHumanStep(rate(addAlternative(negative, "alt"), 1), "fixed");
    expect(unrateableWhy(altRated)).toBe(
      "Step 1 is rated already. Backspace undoes your last change first (your corrected step 1), not the rating.",
    );
    expect(lastChange(undo(altRated))).toBe("your rating of alternative 1 at step 1");
    expect(lastChange(createState("phase2", STEPS))).toBeNull();
  });
});

describe("positionText", () => {
  it("counts only the steps that are rated: a trace's observation is shown, not rated", () => {
    const trace: TaskStep[] = ["thought", "tool_call", "observation", "thought", "answer"].map((type, index) => ({
      index,
      text: type,
      rated: type !== "observation",
    }));
    const two = rate(rate(createState("phase2", trace), 1), 1);
    expect(positionText(two)).toBe("Step 4 of 5 · 2 of 4 rated");
    expect(positionText(rate(rate(two, 1), 1))).toBe("All 4 steps to rate are rated");
    expect(positionText(rate(createState("phase2", STEPS), 1))).toBe("Step 2 of 2 · 1 rated");
    expect(positionText(rate(rate(createState("phase2", STEPS), 1), 1))).toBe("All 2 steps rated");
  });
});

describe("phase 1", () => {
  it("is named with what it asks; phase 2 needs no line", () => {
    expect(modeNote("phase1")).toBe(
      "Phase 1: rate each step and the alternatives offered with it. Where none of them is Positive, write the " +
        "step yourself (c) or another alternative (a) and rate it; n goes on to the next step once something here is Positive.",
    );
    expect(modeNote("phase2")).toBeNull();
  });

  it("says why n did not move on", () => {
    const fresh = createState("phase1", STEPS);
    expect(nextStepWhy(fresh)).toBe("Rate step 1 first (1/2/3); n moves on once something here is Positive.");
    expect(nextStepWhy(rate(fresh, 0))).toBe(
      "Nothing at step 1 is Positive, so n cannot move on yet: write your own step (c) or another alternative (a).",
    );
    const offered = createState("phase1", [{ index: 0, text: "a", alternatives: ["x"] }]);
    expect(nextStepWhy(moveFocus(rate(offered, 0), -1))).toBe(
      "Nothing at step 1 is Positive yet, so n cannot move on: rate the alternatives (↓ / j), or write your own step (c) or another alternative (a).",
    );
    expect(nextStepWhy(createState("phase2", STEPS))).toBe("n is a phase 1 key: in this project rating a step moves on by itself.");
  });
});

describe("submittedMessage", () => {
  it("says a give-up or a bad problem was recorded, not just submitted", () => {
    expect(submittedMessage("give_up", true)).toBe("Given up: recorded with your reason. Here is the next solution.");
    expect(submittedMessage("bad_problem", false)).toBe("Reported as a bad problem.");
    expect(submittedMessage("found_error", true)).toBe("Submitted. Here is the next solution.");
    expect(submittedMessage("solution", false)).toBe("Submitted.");
  });
});

describe("emptyQueueText", () => {
  it("says a pending screening with nothing open is why the queue is empty", () => {
    expect(emptyQueueText({ required: 2, submitted: 0, status: "pending" })).toBe(
      "This project asks for 2 screening answers before regular work, and you have given 0; no screening " +
        "question is open for you right now. Ask a lead: the project may have too few screening questions.",
    );
    expect(emptyQueueText({ required: 2, submitted: 2, status: "passed" })).toBe(EMPTY_TEXT);
    expect(emptyQueueText({ required: 2, submitted: 2, status: "failed" })).toBe(SCREENING_FAILED_TEXT);
    expect(emptyQueueText({ required: 0, submitted: 0, status: "not_required" })).toBe(EMPTY_TEXT);
  });
});

describe("guidance with the single-key shortcuts off", () => {
  // a key named: "(e)", "1 Negative", "1/2/3", "Enter", "Backspace", "press n"
  const KEY = /\([a-z1-3]\)|\b[1-3] [NP]|[1-3]\/[1-3]|\b(Enter|Backspace)\b|[Pp]ress [a-z]\b/;

  it("names the buttons, never a key that does nothing", () => {
    const s = createState("phase2", STEPS);
    expect(guidance(s, false, false)).toBe("Rate the highlighted step: Negative, Neutral or Positive.");
    const done = rate(rate(createState("phase2", STEPS), 1), 1);
    expect(guidance(done, false, false)).toBe("Every step is rated. Press Submit (finish: solution).");
    const wrong = rate(createState("phase2", STEPS), -1);
    const phase1 = rate(createState("phase1", STEPS), 0);
    for (const state of [s, rate(s, 1), done, wrong, addAlternative(wrong, "c"), phase1, { ...phase1, focus: { kind: "human" as const } }]) {
      expect(guidance(state, false, false)).not.toMatch(KEY);
    }
    expect(modeNote("phase1", false)).not.toMatch(KEY);
    expect(modeNote("phase1")).toContain("(c)"); // on: the keys as before
  });
});

describe("nextStepWhy with the single-key shortcuts off (the Next step button's answer)", () => {
  const KEY = /\([a-z1-3]\)|\b[1-3] [NP]|[1-3]\/[1-3]|\b(Enter|Backspace)\b|[Pp]ress [a-z]\b|\b[jn]\b|↓/;

  it("names the buttons, never a key that does nothing", () => {
    const fresh = createState("phase1", STEPS);
    const neutral = rate(fresh, 0);
    expect(nextStepWhy(neutral, false)).toBe(
      "Nothing at step 1 is Positive, so Next step cannot move on yet: write your own step (Write your own step) or another alternative (Write alternative).",
    );
    const offered = moveFocus(rate(createState("phase1", [{ index: 0, text: "a", alternatives: ["x"] }]), 0), -1);
    for (const s of [fresh, neutral, offered, createState("phase2", STEPS), rate(rate(fresh, 1), 1)]) {
      expect(nextStepWhy(s, false)).not.toMatch(KEY);
    }
    expect(nextStepWhy(neutral)).toContain("(c)"); // on: the keys as before
  });
});

describe("describeChange (read out after each change)", () => {
  it("says what a rating, a flag, a critique and an undo did", () => {
    const s0 = createState("phase2", STEPS);
    const s1 = rate(s0, 1);
    expect(describeChange(s0, s1)).toBe("Step 1 rated Positive.");
    const s2 = toggleFlag(s1);
    expect(describeChange(s1, s2)).toBe("Step 1 flagged as unsure.");
    expect(describeChange(s2, toggleFlag(s2))).toBe("Flag removed from step 1.");
    const s3 = setCritique(openCritique(s2), 0, "fine");
    expect(describeChange(s2, s3)).toBe("Critique of step 1 written.");
    expect(describeChange(s3, undo(s3))).toBe("Undone: your critique of step 1.");
  });

  it("names an alternative and its rating", () => {
    const neg = rate(createState("phase2", STEPS), -1);
    const alt = addAlternative(neg, "c");
    expect(describeChange(neg, alt)).toBe("Alternative 1 written at step 1.");
    const focused = moveFocus(alt, 1);
    expect(describeChange(focused, rate(focused, 0))).toBe("Alternative 1 at step 1 rated Neutral.");
  });

  it("says nothing when the labels did not change (a move between alternatives)", () => {
    const alt = addAlternative(rate(createState("phase2", STEPS), -1), "c");
    expect(describeChange(alt, moveFocus(alt, 1))).toBeNull();
  });
});

describe("writerWhy (a or c where they open no box)", () => {
  it("says a Negative comes first in phase 2, a rating in phase 1, and nothing is left once all is rated", () => {
    expect(writerWhy(createState("phase2", STEPS), "newalt")).toBe(
      "a writes an alternative step at a step you rate Negative (1): step 1 is not rated yet.",
    );
    expect(writerWhy(createState("phase1", STEPS), "human")).toBe("Rate step 1 first; then c writes your own step there.");
    const done = rate(rate(createState("phase2", STEPS), 1), 1);
    expect(writerWhy(done, "human")).toBe("Nothing is left to rate, so c has no step to write at: press Enter to submit.");
  });
});
