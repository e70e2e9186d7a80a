import { describe, expect, it } from "vitest";

import {
  compareCurveNote,
  compareFigures,
  fmtShare,
  latestPairwise,
  pairProgressFigures,
  pairQueueFigure,
  positionBiased,
  positionNote,
} from "./compare";
import type { CompareStats, CurvePoint, PairProgress } from "../api/types";

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

  it("says too few answers to tell a position bias below 30 decided answers, instead of implying none", () => {
    expect(positionNote({ share: 0.56, n: 18, ci95: [0.34, 0.75] })).toBe(
      "too few answers to tell (n=18; 30+ decided answers needed)",
    );
    // an interval that leaves 50% out is a bias even with few answers
    expect(positionNote({ share: 1, n: 18, ci95: [0.82, 1] })).toBe(
      "18 decided answers, few, but already leaning to one side (biased); 50% is no position bias",
    );
    expect(positionNote({ share: 0.52, n: 30, ci95: [0.35, 0.69] })).toBe("30 decided answers; 50% is no position bias");
    expect(positionNote({ share: 0.7, n: 200, ci95: [0.63, 0.76] })).toBe(
      "200 decided answers; 50% is no position bias (biased)",
    );
    expect(positionNote(none)).toBe("no decided answer yet");
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
    // a trained run without held-out pairs (too few problems) is trained, not missing
    const trained = compareFigures(empty, [], { id: 1, label_count: 4 }).find((f) => f.key === "reward");
    expect(trained?.value).toBe("—");
    expect(trained?.note).toBe(
      "run #1 (4 preferences) is trained but not measured: no held-out pairs yet (see the learning curve)",
    );
    const note = compareCurveNote({ run: 3, label_count: 20, pairwise_accuracy: 0.5, n_pairs: 4 } as CurvePoint);
    expect(note.tooSmall).toBe(true);
    expect(note.text).toContain("on 4 held-out pairs: too few");
  });
});

describe("compare project progress", () => {
  const pace = { window_hours: 168, active_hours: 0.05, labels: 3, labels_per_hour: 60, min_labels: 3 };
  const base: PairProgress = {
    pairs_total: 3,
    pairs_answered: 2,
    pairs_open: 2,
    pairs_complete: 1,
    preferences: 4,
    preferences_remaining: 3,
    pace,
    eta_hours: 0.05,
    eta_at: null,
  };

  it("counts pairs and preferences, not solutions", () => {
    expect(pairProgressFigures(base)).toEqual([
      { label: "pairs answered", value: "2 / 3", note: "66.7%" },
      { label: "pairs open", value: "2", note: "3 preferences to go" },
      { label: "preferences", value: "4", note: "answers on pairs, gold pairs included" },
      {
        label: "queue done in",
        value: "about 3 min",
        note: "at 60.0 preferences per hour of labeling (3 preferences in 3 min 00 s of active labeling time, last 7 days)",
      },
    ]);
  });

  it("says why there is no estimate, and when the queue is empty or done", () => {
    const quiet = { ...base, eta_hours: null, pace: { ...pace, active_hours: 0, labels: 0, labels_per_hour: 0 } };
    expect(pairQueueFigure(quiet)).toEqual({
      label: "queue done in",
      value: "no preferences in the last 7 days",
      note: "no queue preferences in the last 7 days",
    });
    expect(pairQueueFigure({ ...quiet, preferences: 0, pairs_answered: 0 }).value).toBe("—");
    const thin = { ...base, eta_hours: null, pace: { ...pace, labels: 2 } };
    expect(pairQueueFigure(thin)).toEqual({
      label: "queue done in",
      value: "too few preferences to tell",
      note: "only 2 preferences in the last 7 days: the estimate needs 3",
    });
    const none = { ...base, pairs_total: 0, pairs_answered: 0, pairs_open: 0, preferences_remaining: 0 };
    expect(pairQueueFigure(none)).toEqual({ label: "queue", value: "empty", note: "no pairs yet: import solutions to pair" });
    // solutions imported, one per problem: importing "solutions to pair" is what the lead did already
    expect(pairQueueFigure(none, 3).note).toBe(
      "no pairs: none of the 3 solutions has another of its problem to pair with (import two or more per problem)",
    );
    const done = { ...base, pairs_open: 0, pairs_complete: 3, preferences_remaining: 0 };
    expect(pairQueueFigure(done)).toEqual({ label: "queue", value: "done", note: "every pair has the preferences it needs" });
    expect(pairProgressFigures({ ...base, preferences_remaining: 1 })[1]!.note).toBe("1 preference to go");
  });
});
