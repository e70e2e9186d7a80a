import { describe, expect, it } from "vitest";

import {
  addAlternative,
  buildPayload,
  canAddAlternatives,
  createState,
  currentIndex,
  errorIndex,
  finishReason,
  flagTarget,
  focusWriter,
  hasWork,
  IncompleteLabelingError,
  isComplete,
  MAX_UNDO,
  moveFocus,
  needsHumanStep,
  nextStep,
  rate,
  restore,
  setHumanStep,
  toSaved,
  toggleFlag,
  toggleFlagAt,
  undo,
  visibleCount,
  writtenStep,
  type LabelingState,
  type Rating,
  type TaskStep,
} from "./state";

const STEPS: TaskStep[] = [
  { index: 0, text: "Let $x = 2$." },
  { index: 1, text: "Then $x^2 = 4$." },
  { index: 2, text: "So the answer is $4$." },
];

function rateAll(s: LabelingState, ratings: Rating[]): LabelingState {
  return ratings.reduce((acc, r) => rate(acc, r), s);
}

const OPTS = { idempotencyKey: "key-1", totalTimeMs: 1234.4 };

describe("rating order", () => {
  it("rates only the current step and reveals the next one as each is rated", () => {
    let s = createState("phase2", STEPS);
    expect(currentIndex(s)).toBe(0);
    expect(visibleCount(s)).toBe(1);
    s = rate(s, 1);
    expect(s.labels.map((l) => l.rating)).toEqual([1, null, null]);
    expect(currentIndex(s)).toBe(1);
    expect(visibleCount(s)).toBe(2);
    s = rate(s, 0);
    expect(s.labels.map((l) => l.rating)).toEqual([1, 0, null]);
    expect(visibleCount(s)).toBe(3);
    expect(isComplete(s)).toBe(false);
  });

  it("never re-rates a step that was rated: only undo changes it", () => {
    let s = rateAll(createState("phase2", STEPS), [1, 1, 1]);
    expect(currentIndex(s)).toBeNull();
    const again = rate(s, -1);
    expect(again).toBe(s);
    s = undo(s);
    s = rate(s, 0);
    expect(s.labels.map((l) => l.rating)).toEqual([1, 1, 0]);
  });

  it("does nothing with no steps", () => {
    const s = createState("phase2", []);
    expect(rate(s, 1)).toBe(s);
    expect(isComplete(s)).toBe(false);
    expect(toggleFlag(s)).toBe(s);
  });
});

describe("writtenStep", () => {
  it("trims prose; keeps a line of code's indentation, dropping blank lines before and whitespace after", () => {
    expect(writtenStep("  So $x = 3$. ")).toBe("So $x = 3$.");
    expect(writtenStep("\n  \n    return total / len(xs)  \n", true)).toBe("    return total / len(xs)");
    expect(writtenStep(" \n\t\n", true)).toBe("");
  });

  it("is what a corrected step and an alternative store in a code task", () => {
    let s = rate(createState("phase2", STEPS, { keepIndent: true }), -1);
    s = addAlternative(s, "\n    return 1\n");
    expect(s.labels[0].alternatives[0].text).toBe("    return 1");
    s = setHumanStep(s, "    return 2\n");
    expect(s.labels[0].human).toBe("    return 2");
  });
});

describe("undo", () => {
  it("undoes ratings one at a time, newest first, and hides the steps again", () => {
    let s = rateAll(createState("phase2", STEPS), [1, 0]);
    s = undo(s);
    expect(s.labels.map((l) => l.rating)).toEqual([1, null, null]);
    expect(visibleCount(s)).toBe(2);
    s = undo(s);
    expect(s.labels.map((l) => l.rating)).toEqual([null, null, null]);
    expect(undo(s)).toBe(s);
  });

  it("undoes a flag, a written alternative and a corrected step too", () => {
    let s = toggleFlagAt(createState("phase2", STEPS), { step: 0, alt: null });
    expect(s.labels[0].flagged).toBe(true);
    s = undo(s);
    expect(s.labels[0].flagged).toBe(false);
    s = rate(s, -1);
    s = addAlternative(s, "Let $x = 3$.");
    s = focusWriter(s, "human"); // c, type, Enter: the snapshot holds the box's focus
    s = setHumanStep(s, "Correct step");
    expect(s.labels[0].human).toBe("Correct step");
    s = undo(s);
    expect(s.labels[0].human).toBeNull();
    expect(s.focus).toEqual({ kind: "main" }); // not the emptied box: the next Backspace undoes again
    s = undo(s);
    expect(s.labels[0].alternatives).toEqual([]);
    s = undo(s);
    expect(s.labels[0].rating).toBeNull();
  });

  it("keeps at most MAX_UNDO snapshots", () => {
    let s = createState("phase2", STEPS);
    for (let i = 0; i < MAX_UNDO + 20; i++) s = toggleFlagAt(s, { step: 0, alt: null });
    expect(s.past.length).toBe(MAX_UNDO);
  });
});

describe("flag", () => {
  it("f flags the rating just given, not the step that comes next", () => {
    let s = createState("phase2", STEPS);
    expect(toggleFlag(s)).toBe(s); // nothing rated yet: nothing to mark unsure
    s = rate(s, 0);
    expect(flagTarget(s)).toEqual({ step: 0, alt: null });
    s = toggleFlag(s);
    expect(s.labels[0]).toMatchObject({ rating: 0, flagged: true });
    expect(s.labels[1].flagged).toBe(false);
    s = rate(s, 1);
    s = toggleFlag(s);
    expect(s.labels.map((l) => l.flagged)).toEqual([true, true, false]);
    s = toggleFlag(s);
    expect(s.labels.map((l) => l.flagged)).toEqual([true, false, false]);
  });

  it("flags the alternative just rated, and undo brings back the earlier target", () => {
    let s = createState("phase2", [{ index: 0, text: "a", alternatives: ["b", "c"] }]);
    s = rate(s, -1);
    expect(s.focus).toEqual({ kind: "alt", alt: 0 });
    s = rate(s, 1);
    expect(flagTarget(s)).toEqual({ step: 0, alt: 0 });
    s = toggleFlag(s);
    expect(s.labels[0].alternatives[0].flagged).toBe(true);
    expect(s.labels[0].flagged).toBe(false);
    s = undo(undo(s));
    expect(flagTarget(s)).toEqual({ step: 0, alt: null });
  });

  it("the Flag buttons flag any step shown, rated or not, and nothing hidden", () => {
    let s = rate(createState("phase2", STEPS), 1);
    s = toggleFlagAt(s, { step: 1, alt: null });
    expect(s.labels.map((l) => l.flagged)).toEqual([false, true, false]);
    expect(toggleFlagAt(s, { step: 2, alt: null })).toBe(s);
    expect(toggleFlagAt(s, { step: 0, alt: 3 })).toBe(s);
  });

  it("keeps the flag target in drafts and ignores a malformed one", () => {
    const s = rate(rate(createState("phase2", STEPS), 1), 0);
    const saved = JSON.parse(JSON.stringify(toSaved(s)));
    expect(restore("phase2", STEPS, saved).last).toEqual({ step: 1, alt: null });
    expect(undo(restore("phase2", STEPS, saved)).last).toEqual({ step: 0, alt: null });
    expect(restore("phase2", STEPS, { ...saved, last: { step: 7, alt: null } }).last).toBeNull();
  });
});

describe("hasWork", () => {
  it("is false for a fresh state and true once anything is labeled", () => {
    const fresh = createState("phase2", [{ index: 0, text: "a", alternatives: ["b"] }]);
    expect(hasWork(fresh)).toBe(false);
    expect(hasWork(rate(fresh, 1))).toBe(true);
    expect(hasWork(toggleFlagAt(fresh, { step: 0, alt: null }))).toBe(true);
  });
});

describe("phase 2", () => {
  it("finishes with solution when every step is rated without a Negative", () => {
    const s = rateAll(createState("phase2", STEPS), [1, 0, 1]);
    expect(finishReason(s)).toBe("solution");
    const p = buildPayload(s, OPTS);
    expect(p).toEqual({
      idempotency_key: "key-1",
      finish_reason: "solution",
      total_time_ms: 1234,
      reason: "",
      steps: [
        { index: 0, rating: 1, flagged: false, alternatives: [], human_completion: null },
        { index: 1, rating: 0, flagged: false, alternatives: [], human_completion: null },
        { index: 2, rating: 1, flagged: false, alternatives: [], human_completion: null },
      ],
    });
  });

  it("a Negative ends the pass: later steps stay hidden and unratable, the reason is found_error", () => {
    let s = rateAll(createState("phase2", STEPS), [1, -1]);
    expect(errorIndex(s)).toBe(1);
    expect(currentIndex(s)).toBe(1);
    expect(visibleCount(s)).toBe(2);
    expect(finishReason(s)).toBe("found_error");
    const after = rate(s, 1);
    expect(after).toBe(s);
    s = toggleFlag(s);
    expect(s.labels[1].flagged).toBe(true);
    const p = buildPayload(s, OPTS);
    expect(p.finish_reason).toBe("found_error");
    expect(p.steps.map((x) => [x.index, x.rating, x.flagged])).toEqual([
      [0, 1, false],
      [1, -1, true],
    ]);
  });

  it("alternatives and a corrected step are allowed only at the Negative step", () => {
    let s = createState("phase2", STEPS);
    expect(canAddAlternatives(s)).toBe(false);
    expect(addAlternative(s, "x")).toBe(s);
    expect(setHumanStep(s, "x")).toBe(s);
    expect(focusWriter(s, "human")).toBe(s);
    s = rate(s, 1);
    expect(canAddAlternatives(s)).toBe(false);
    s = rate(s, -1);
    expect(canAddAlternatives(s)).toBe(true);
    expect(focusWriter(s, "newalt").focus).toEqual({ kind: "newalt" });
  });

  it("offered alternatives are rated in order after the Negative; unrated ones are left out", () => {
    const steps: TaskStep[] = [{ index: 4, text: "wrong", alternatives: ["alt A", "alt B", "alt C"] }];
    let s = rate(createState("phase2", steps), -1);
    expect(s.focus).toEqual({ kind: "alt", alt: 0 });
    s = rate(s, 1);
    expect(s.focus).toEqual({ kind: "alt", alt: 1 });
    s = moveFocus(s, 1);
    s = rate(s, 0);
    expect(s.labels[0].alternatives.map((a) => a.rating)).toEqual([1, null, 0]);
    expect(isComplete(s)).toBe(true);
    const p = buildPayload(s, OPTS);
    expect(p.steps).toEqual([
      {
        index: 4,
        rating: -1,
        flagged: false,
        alternatives: [
          { text: "alt A", rating: 1, flagged: false },
          { text: "alt C", rating: 0, flagged: false },
        ],
        human_completion: null,
      },
    ]);
  });

  it("a written alternative must be rated before submitting; the corrected step is the human completion", () => {
    let s = rateAll(createState("phase2", STEPS), [1, -1]);
    s = addAlternative(s, "  Then $x^2 = 4$, not 5.  ");
    expect(s.focus).toEqual({ kind: "alt", alt: 0 });
    expect(isComplete(s)).toBe(false);
    expect(() => buildPayload(s, OPTS)).toThrow(IncompleteLabelingError);
    s = rate(s, 1);
    s = setHumanStep(s, "Then $x^2=4$.");
    expect(isComplete(s)).toBe(true);
    const p = buildPayload(s, OPTS);
    expect(p.steps[1]).toEqual({
      index: 1,
      rating: -1,
      flagged: false,
      alternatives: [{ text: "Then $x^2 = 4$, not 5.", rating: 1, flagged: false }],
      human_completion: "Then $x^2=4$.",
    });
    expect(addAlternative(s, "   ")).toBe(s);
  });

  it("moveFocus stays within the current step's targets", () => {
    let s = createState("phase2", [{ index: 0, text: "a", alternatives: ["b"] }]);
    s = rate(s, -1);
    expect(moveFocus(s, 1).focus).toEqual({ kind: "alt", alt: 0 });
    expect(moveFocus(s, -1).focus).toEqual({ kind: "main" });
    expect(moveFocus(moveFocus(s, -1), -1).focus).toEqual({ kind: "main" });
  });
});

describe("phase 1", () => {
  it("a Positive step moves on; all steps passed finishes with solution", () => {
    const s = rateAll(createState("phase1", STEPS), [1, 1, 1]);
    expect(currentIndex(s)).toBeNull();
    expect(finishReason(s)).toBe("solution");
    expect(buildPayload(s, OPTS).steps).toHaveLength(3);
  });

  it("a Negative does not end the pass: without a Positive the annotator must write a human step", () => {
    let s = rate(createState("phase1", STEPS), -1);
    expect(errorIndex(s)).toBeNull();
    expect(currentIndex(s)).toBe(0);
    expect(s.focus).toEqual({ kind: "main" }); // the keys stay keys: c opens the box
    expect(focusWriter(s, "human").focus).toEqual({ kind: "human" });
    expect(needsHumanStep(s)).toBe(true);
    expect(nextStep(s)).toBe(s);
    s = setHumanStep(s, "My own first step.");
    expect(currentIndex(s)).toBe(1);
    expect(s.labels[0].done).toBe(true);
    s = rateAll(s, [0]);
    expect(needsHumanStep(s)).toBe(true);
    s = setHumanStep(s, "   ");
    expect(currentIndex(s)).toBe(1);
    s = setHumanStep(s, "My second.");
    s = rate(s, 1);
    expect(finishReason(s)).toBe("solution");
    const p = buildPayload(s, OPTS);
    expect(p.steps.map((x) => [x.rating, x.human_completion])).toEqual([
      [-1, "My own first step."],
      [0, "My second."],
      [1, null],
    ]);
  });

  it("offered alternatives are rated at any step; a Positive alternative passes the step", () => {
    const steps: TaskStep[] = [
      { index: 0, text: "s0", alternatives: ["a0", "b0"] },
      { index: 1, text: "s1" },
    ];
    let s = rate(createState("phase1", steps), 0);
    expect(s.focus).toEqual({ kind: "alt", alt: 0 });
    expect(currentIndex(s)).toBe(0);
    s = rate(s, -1);
    s = rate(s, 1);
    expect(currentIndex(s)).toBe(1);
    expect(s.focus).toEqual({ kind: "main" });
    s = rate(s, 1);
    const p = buildPayload(s, OPTS);
    expect(p.finish_reason).toBe("solution");
    expect(p.steps[0].alternatives.map((a) => a.rating)).toEqual([-1, 1]);
  });

  it("n does not move past an alternative the annotator wrote and has not rated", () => {
    let s = rate(createState("phase1", [{ index: 0, text: "s0" }, { index: 1, text: "s1" }]), 0);
    s = addAlternative(s, "my other step");
    s = addAlternative(s, "a third");
    expect(s.focus).toEqual({ kind: "alt", alt: 1 });
    s = rate(s, 1); // the second is Positive: the step is resolved, the first still unrated
    // was: the step was passed, and the unrated one blocked the submit until Undo
    expect(currentIndex(s)).toBe(0);
    expect(s.focus).toEqual({ kind: "alt", alt: 0 }); // focus goes to it
    expect(nextStep(s)).toBe(s); // n waits for it too
    s = rate(s, -1);
    expect(currentIndex(s)).toBe(1);
    s = rate(s, 1);
    expect(finishReason(s)).toBe("solution");
  });

  it("with alternatives to rate after a Positive step, n moves on early", () => {
    let s = rate(createState("phase1", [{ index: 0, text: "s0", alternatives: ["a", "b"] }]), 1);
    expect(currentIndex(s)).toBe(0);
    s = nextStep(s);
    expect(currentIndex(s)).toBeNull();
    expect(finishReason(s)).toBe("solution");
    expect(buildPayload(s, OPTS).steps[0].alternatives).toEqual([]);
  });

  it("no alternatives rated Positive leads to the human step box", () => {
    let s = rate(createState("phase1", [{ index: 0, text: "s0", alternatives: ["a"] }]), 0);
    s = rate(s, 0);
    expect(s.focus).toEqual({ kind: "main" });
    expect(needsHumanStep(s)).toBe(true);
  });

  it("undo brings back a step that was passed", () => {
    let s = rateAll(createState("phase1", STEPS), [1]);
    expect(currentIndex(s)).toBe(1);
    s = undo(s);
    expect(currentIndex(s)).toBe(0);
    expect(s.labels[0]).toMatchObject({ rating: null, done: false });
  });
});

describe("give up and bad problem", () => {
  it("need a reason and keep the ratings made so far", () => {
    const s = rateAll(createState("phase2", STEPS), [1]);
    expect(() => buildPayload(s, { ...OPTS, giveUp: { reason: "give_up", note: "  " } })).toThrow(
      IncompleteLabelingError,
    );
    const p = buildPayload(s, { ...OPTS, giveUp: { reason: "give_up", note: " too hard " } });
    expect(p.finish_reason).toBe("give_up");
    expect(p.reason).toBe("too hard");
    expect(p.steps).toEqual([{ index: 0, rating: 1, flagged: false, alternatives: [], human_completion: null }]);
    const b = buildPayload(createState("phase2", STEPS), {
      ...OPTS,
      giveUp: { reason: "bad_problem", note: "ambiguous" },
    });
    expect(b).toMatchObject({ finish_reason: "bad_problem", reason: "ambiguous", steps: [] });
  });

  it("refuses a normal submit while incomplete", () => {
    expect(() => buildPayload(rateAll(createState("phase2", STEPS), [1, 1]), OPTS)).toThrow(
      IncompleteLabelingError,
    );
  });
});

describe("drafts", () => {
  it("round-trips through JSON with undo history", () => {
    const s = rateAll(createState("phase2", STEPS), [1, 0]);
    const r = restore("phase2", STEPS, JSON.parse(JSON.stringify(toSaved(s))));
    expect(r.labels).toEqual(s.labels);
    expect(currentIndex(r)).toBe(2);
    expect(undo(r).labels.map((l) => l.rating)).toEqual([1, null, null]);
  });

  it("ignores malformed drafts and drafts for a different number of steps", () => {
    const fresh = createState("phase2", STEPS);
    expect(restore("phase2", STEPS, null).labels).toEqual(fresh.labels);
    expect(restore("phase2", STEPS, { labels: "x" }).labels).toEqual(fresh.labels);
    const s = rate(createState("phase2", STEPS.slice(0, 2)), 1);
    expect(restore("phase2", STEPS, toSaved(s)).labels).toEqual(fresh.labels);
    const bad = JSON.parse(JSON.stringify(toSaved(rate(fresh, 1))));
    bad.labels[0].rating = 7;
    expect(restore("phase2", STEPS, bad).labels).toEqual(fresh.labels);
  });

  it("does not restore focus into a text box", () => {
    let s = rate(createState("phase2", STEPS), -1);
    s = focusWriter(s, "human");
    expect(restore("phase2", STEPS, toSaved(s)).focus).toEqual({ kind: "main" });
  });
});
