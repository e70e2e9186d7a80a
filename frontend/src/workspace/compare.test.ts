import { describe, expect, it } from "vitest";

import {
  answerOf,
  choiceNotRecorded,
  type CompareChoice,
  describeChoice,
  missingChoice,
  nextMarker,
  pairKind,
  prefer,
  refusedReason,
  upgradeDraft,
  withStrength,
} from "./compare";

const choice = (preference: CompareChoice["preference"], strength: CompareChoice["strength"]): CompareChoice => ({
  preference,
  strength,
  firstWrong: { A: null, B: 0 },
});

describe("a compare answer", () => {
  it("needs the strength chosen for A or B: none is preselected", () => {
    expect(missingChoice(choice(null, null))).toMatch(/^Choose A, B or tie first/);
    expect(missingChoice(choice(null, 2))).toMatch(/^Choose A, B or tie first/);
    expect(missingChoice(choice("B", null))).toBe("Choose by how much B is better: 1 slightly, 2 clearly, 3 much.");
    expect(answerOf(choice("B", null))).toBeNull();
    expect(answerOf(choice("A", 1))).toEqual({ preference: "A", strength: 1 });
    expect(missingChoice(choice("A", 3))).toBeNull();
  });

  it("sends no strength for a tie, and choosing tie clears the one chosen", () => {
    expect(answerOf(choice("tie", null))).toEqual({ preference: "tie" });
    expect(answerOf(choice("tie", 3))).toEqual({ preference: "tie" }); // a draft saved before this fix
    expect(prefer(choice("A", 3), "tie").strength).toBeNull();
    expect(prefer(choice("A", 3), "B")).toEqual(choice("B", 3)); // A to B keeps the chosen strength
    expect(prefer(choice("tie", null), "A").strength).toBeNull(); // and tie to A asks for it
  });

  it("takes no strength during a tie: 2 then a asks for A's instead of carrying a hidden one", () => {
    const tie = choice("tie", null);
    expect(withStrength(tie, 2)).toBe(tie);
    expect(prefer(withStrength(tie, 2), "A").strength).toBeNull();
    expect(withStrength(choice("A", null), 2)).toEqual(choice("A", 2));
    expect(withStrength(choice(null, null), 3).strength).toBe(3); // before a side: kept for it, as chosen
  });

  it("moves a first-wrong marker down one step and past the last to none", () => {
    expect([nextMarker(null, 2), nextMarker(0, 2), nextMarker(1, 2), nextMarker(null, 0)]).toEqual([0, 1, null, null]);
  });

  it("steps over a trace's unrated observation: it cannot be the first wrong step", () => {
    const rated = [true, false, true];
    expect([nextMarker(null, 3, rated), nextMarker(0, 3, rated), nextMarker(2, 3, rated)]).toEqual([0, 2, null]);
    expect(nextMarker(null, 1, [false])).toBeNull();
  });
});

describe("a pair's kind", () => {
  const steps = (type?: "thought") => [{ index: 0, text: "x", rated: true, ...(type ? { type } : {}) }];
  it("is code with a language, trace with typed steps, else math", () => {
    const candidates = (type?: "thought") => [
      { solution_id: 1, final_answer: null, steps: steps(type) },
      { solution_id: 2, final_answer: null, steps: steps(type) },
    ];
    expect(pairKind({ language: "python", candidates: candidates() })).toBe("code");
    expect(pairKind({ candidates: candidates("thought") })).toBe("trace");
    expect(pairKind({ candidates: candidates() })).toBe("math");
  });
});

describe("a compare draft from before revisions", () => {
  it("reads as the oldest revision, keeping its key and choice", () => {
    const old = { key: "k1", choice: choice("A", 2), elapsedMs: 900 };
    expect(upgradeDraft(old)).toEqual({ v: 1, rev: 0, saved_at: "", key: "k1", elapsed_ms: 900, choice: old.choice });
    const current = { v: 1, rev: 4, key: "k2" };
    expect(upgradeDraft(current)).toBe(current);
    expect(upgradeDraft(null)).toBeNull();
    expect(upgradeDraft({ choice: choice("B", 1) })).toEqual({ choice: choice("B", 1) }); // no key: left as is
  });
});

describe("refusedReason", () => {
  it("keeps the API's first sentence, not its words for API clients", () => {
    const late =
      "Your lease expired and another annotator took this pair, so this answer was not recorded. The answer is " +
      "kept for API clients as a refused submit in your progress (refused_submits, GET /api/v1/projects/duel/me/).";
    expect(refusedReason(late)).toBe(
      "Your lease expired and another annotator took this pair, so this answer was not recorded.",
    );
    expect(refusedReason("This assignment is no longer yours.")).toBe("This assignment is no longer yours.");
  });
});

describe("with the single-key shortcuts off", () => {
  it("names no key in the prompt or the verdict", async () => {
    const { verdictText } = await import("./compare");
    const none: CompareChoice = { preference: null, strength: null, firstWrong: { A: null, B: null } };
    expect(missingChoice(none, false)).toBe("Choose A, B or tie first.");
    expect(missingChoice(choice("B", null), false)).toBe("Choose by how much B is better: slightly, clearly or much.");
    expect(verdictText(none, false)).toBe("Which is better? A, B or a tie");
    expect(verdictText(choice("A", null), false)).toBe("A is better: by how much? slightly, clearly or much");
    // on (the default), the keys are named as before
    expect(verdictText(none)).toBe("Which is better? ← / a, → / b, t for a tie");
    expect(verdictText(choice("A", 2), false)).toBe("A is clearly better");
    expect(verdictText(choice("tie", null), false)).toBe("Tie");
  });
});

describe("a choice not recorded", () => {
  it("is named in words, as the annotator saw the pair", () => {
    expect(describeChoice(choice("B", 2))).toBe("B is clearly better · first wrong step: B step 1");
    expect(describeChoice({ preference: "tie", strength: null, firstWrong: { A: 2, B: null } })).toBe(
      "Tie · first wrong step: A step 3",
    );
    expect(describeChoice(choice("A", null))).toBe("A is better · first wrong step: B step 1");
    expect(choiceNotRecorded({ preference: "A", strength: 3, firstWrong: { A: null, B: null } })).toBe(
      "your choice on it was not recorded (A is much better)",
    );
  });

  it("is none when nothing was chosen or marked", () => {
    expect(describeChoice({ preference: null, strength: null, firstWrong: { A: null, B: null } })).toBeNull();
    expect(choiceNotRecorded(undefined)).toBeNull();
  });
});
