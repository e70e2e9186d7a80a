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
