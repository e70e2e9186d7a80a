import { describe, expect, it } from "vitest";

import { compareCurveNote, compareFigures, fmtShare, latestPairwise, positionBiased } from "./compare";
import type { CompareStats, CurvePoint } from "../api/types";

const none = { share: null, n: 0, ci95: null };

describe("compare dashboard figures", () => {
  it("formats a share with its interval, and a dash before any answer", () => {
    expect(fmtShare({ share: 0.8, n: 5, ci95: [0.38, 0.96] })).toBe("80.0% (38%–96%)");
    expect(fmtShare(none)).toBe("—");
  });

  it("calls position bias only when the interval leaves 0.5 out", () => {
    expect(positionBiased({ share: 0.57, n: 7, ci95: [0.25, 0.84] })).toBe(false);
    expect(positionBiased({ share: 0.7, n: 200, ci95: [0.63, 0.76] })).toBe(true);
    expect(positionBiased(none)).toBe(false);
  });

  it("takes the latest reward-model point of the curve", () => {
    const curve = [
      { run: 1, label_count: 4, pairwise_accuracy: 0.55, n_pairs: 40 },
      { run: 2, label_count: 9, accuracy: 0.7 },
    ] as CurvePoint[];
    expect(latestPairwise(curve)?.run).toBe(1);
    expect(latestPairwise([])).toBeNull();
  });

  it("says when nothing is measured yet, and warns on few held-out pairs", () => {
    const empty: CompareStats = {
      preferences: 0,
      ties: 0,
      pairs_answered: 0,
      position_bias_left: none,
      agreement: none,
      agreement_with_grading: none,
      gold_accuracy: none,
    };
    const figures = compareFigures(empty, []);
    expect(figures.map((f) => f.value)).toEqual(["—", "—", "—", "—", "—"]);
    expect(figures.find((f) => f.key === "reward")?.note).toBe("no trained reward model yet");
    const note = compareCurveNote({ run: 3, label_count: 20, pairwise_accuracy: 0.5, n_pairs: 4 } as CurvePoint);
    expect(note.tooSmall).toBe(true);
    expect(note.text).toContain("on 4 held-out pairs: too few");
  });
});
