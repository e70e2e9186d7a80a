import { describe, expect, it } from "vitest";

import {
  buildPayload,
  createState,
  currentIndex,
  finishReason,
  missingCritique,
  openCritique,
  rate,
  restore,
  setCritique,
  type TaskStep,
  toSaved,
  undo,
} from "./state";

const trace: TaskStep[] = [
  { index: 0, text: "think", type: "thought" },
  { index: 1, text: "look(1)", type: "tool_call" },
  { index: 2, text: "result", type: "observation", rated: false },
  { index: 3, text: "42", type: "answer" },
];
const opts = { idempotencyKey: "k", totalTimeMs: 5 };

describe("steps shown but not rated", () => {
  it("are passed over by the rating flow and sent with a null rating", () => {
    let s = createState("phase2", trace);
    s = rate(rate(s, 1), 1);
    expect(currentIndex(s)).toBe(3); // the observation is skipped
    s = rate(s, 1);
    expect(finishReason(s)).toBe("solution");
    expect(buildPayload(s, opts).steps.map((x) => [x.index, x.rating])).toEqual([
      [0, 1],
      [1, 1],
      [2, null],
      [3, 1],
    ]);
  });

  it("phase 1 moves past them too", () => {
    let s = createState("phase1", trace);
    s = rate(rate(rate(s, 1), 1), 1);
    expect(finishReason(s)).toBe("solution");
  });
});

describe("critiques", () => {
  const code: TaskStep[] = [0, 1, 2].map((index) => ({ index, text: `line ${index}` }));

  it("open on the step rated last, save with the labels, undo, and go into the payload", () => {
    let s = createState("phase2", code);
    expect(openCritique(s)).toBe(s); // nothing rated yet
    s = rate(rate(s, 1), -1);
    s = openCritique(s);
    expect(s.focus).toEqual({ kind: "critique", step: 1 });
    s = setCritique(s, 1, "  off by one  ");
    expect(s.labels[1].critique).toBe("off by one");
    expect(s.focus).toEqual({ kind: "main" });
    expect(undo(s).labels[1].critique ?? null).toBeNull();
    const payload = buildPayload(s, opts);
    expect(payload.finish_reason).toBe("found_error");
    expect(payload.steps[1].critique).toBe("off by one");
    expect("critique" in payload.steps[0]).toBe(false);
    expect(restore("phase2", code, JSON.parse(JSON.stringify(toSaved(s)))).labels[1].critique).toBe("off by one");
  });

  it("are required on Negative steps where the project says so", () => {
    let s = rate(createState("phase2", code, { critiqueRequired: true }), -1);
    expect(missingCritique(s)).toBe(0);
    expect(finishReason(s)).toBeNull();
    s = setCritique(s, 0, "wrong");
    expect(finishReason(s)).toBe("found_error");
    expect(missingCritique(setCritique(s, 0, "   "))).toBe(0); // blank removes it
  });

  it("restores drafts saved before critiques existed", () => {
    const old = { labels: code.map(() => ({ rating: null, flagged: false, alternatives: [], human: null, done: false })), focus: { kind: "main" }, past: [] };
    const s = restore("phase2", code, old);
    expect(s.labels.length).toBe(3);
    expect(rate(s, 1).labels[0].rating).toBe(1);
  });
});
