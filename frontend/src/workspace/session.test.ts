import { describe, expect, it } from "vitest";

import type { SavedLabels, StepLabel } from "../labeling/state";
import { notRecorded } from "./session";

const step = (rating: StepLabel["rating"], more: Partial<StepLabel> = {}): StepLabel => ({
  rating,
  flagged: false,
  alternatives: [],
  human: null,
  done: false,
  ...more,
});
const saved = (labels: StepLabel[]): SavedLabels => ({ labels, focus: { kind: "main" }, past: [] });

describe("the work a lost claim's draft held, in words", () => {
  it("counts the ratings (alternatives' too) and names them", () => {
    expect(notRecorded(saved([step(1), step(0), step(null)]))).toBe(
      "your 2 ratings on it were not recorded (Step 1 Positive · Step 2 Neutral)",
    );
    expect(notRecorded(saved([step(1, { flagged: true })]))).toBe("your rating on it was not recorded (Step 1 Positive (flagged))");
    const alt = { text: "x = 4", rating: 1 as const, flagged: false, offered: false };
    expect(notRecorded(saved([step(-1, { alternatives: [alt] })]))).toBe(
      "your 2 ratings on it were not recorded (Step 1 Negative, 1 alternative)",
    );
  });

  it("is null when nothing was done", () => {
    expect(notRecorded(null)).toBeNull();
    expect(notRecorded(saved([step(null), step(null)]))).toBeNull();
  });
});

describe("text still being typed when the claim was lost", () => {
  it("names an unsaved critique, own step or alternative by its step, with its words", () => {
    expect(notRecorded(saved([step(-1), step(null)]), { "sl-critique-0": "  The sum is 12, not 14.  " })).toBe(
      "your rating on it was not recorded (Step 1 Negative · a critique of step 1 being written “The sum is 12, not 14.”)",
    );
    expect(notRecorded(saved([step(null), step(null)]), { "sl-newalt-1": "x = 4", "sl-human-0": "Let x = 2" })).toBe(
      "your work on it was not recorded (your own step 1 being written “Let x = 2” · a new alternative at step 2 being written “x = 4”)",
    );
  });

  it("cuts a long text short and ignores blank boxes and unknown ids", () => {
    const long = "a".repeat(200);
    expect(notRecorded(null, { "sl-critique-2": long })).toBe(
      `your work on it was not recorded (a critique of step 3 being written “${"a".repeat(119)}…”)`,
    );
    expect(notRecorded(null, { "sl-critique-0": "   ", "other-box": "text" })).toBeNull();
  });
});
