import { describe, expect, it } from "vitest";

import {
  busiest,
  fmtClock,
  fmtEta,
  fmtInt,
  fmtPace,
  fmtPct,
  fmtScore,
  fmtSeconds,
  fmtWhen,
  flagNote,
  agreementNotes,
  curveNote,
  compareGenerationLabel,
  compareGenerationLines,
  compareGenerationsNote,
  generationLabel,
  generationLines,
  generationName,
  goldFirstErrorText,
  gradeOnlyNote,
  plural,
  heldoutCell,
  heldoutSize,
  queueFigure,
  savedAmount,
  savedInterval,
  screeningShortage,
  screeningText,
  shares,
  stepsNote,
  toUnixSeconds,
} from "./format";

describe("format", () => {
  it("formats counts, shares and missing values", () => {
    expect(fmtInt(1234567)).toBe("1,234,567");
    expect(fmtInt(null)).toBe("—");
    expect(fmtPct(0.1234)).toBe("12.3%");
    expect(fmtPct(null)).toBe("—");
  });

  it("formats durations", () => {
    expect(fmtSeconds(8.46)).toBe("8.5 s");
    expect(fmtSeconds(125)).toBe("2 min 05 s");
    expect(fmtSeconds(3720)).toBe("1 h 02 min");
    expect(fmtSeconds(null)).toBe("—");
  });

  it("says when the queue is done at the current pace", () => {
    expect(fmtEta(0, 0)).toBe("queue done");
    expect(fmtEta(null, 5)).toBe("no labels in the last 7 days");
    expect(fmtEta(0.25, 5)).toBe("about 15 min");
    expect(fmtEta(5, 5)).toBe("about 5.0 h");
    expect(fmtEta(72, 5)).toBe("about 3.0 days");
  });

  it("shapes series", () => {
    expect(toUnixSeconds(["1970-01-01T00:01:00+00:00"])).toEqual([60]);
    const rows = [
      { annotator: "a", labels: [3, 1] },
      { annotator: "b", labels: [0, 0] },
      { annotator: "c", labels: [1, 0] },
    ];
    expect(busiest(rows, 5).map((r) => r.annotator)).toEqual(["a", "c"]);
    expect(busiest(rows, 1).map((r) => r.annotator)).toEqual(["a"]);
    expect(generationName(null)).toBe("queued without a model");
    expect(generationName(2)).toBe("gen 2");
    expect(shares(["x", "y"], [1, 3])).toEqual([
      ["x", 1, 0.25],
      ["y", 3, 0.75],
    ]);
    expect(shares(["x"], [0])).toEqual([["x", 0, null]]);
  });

  it("bases the pace on the time spent labeling, and says when it has too little to go on", () => {
    const pace = { window_hours: 168, min_labels: 3 };
    // the demo: 10 labels of 2.8 s, not "10.0 labels per active hour (10 in 1 active hour)"
    expect(fmtPace({ ...pace, active_hours: 28 / 3600, labels: 10, labels_per_hour: 10 / (28 / 3600) })).toBe(
      "at 1,286 labels per hour of labeling (10 labels in 28.0 s of active labeling time, last 7 days)",
    );
    expect(fmtPace({ ...pace, active_hours: 0.1, labels: 6, labels_per_hour: 60 })).toBe(
      "at 60.0 labels per hour of labeling (6 labels in 6 min 00 s of active labeling time, last 7 days)",
    );
    expect(fmtPace({ ...pace, active_hours: 0.001, labels: 1, labels_per_hour: 1000 })).toBe(
      "only 1 label in the last 7 days: the estimate needs 3",
    );
    expect(fmtPace({ ...pace, active_hours: 0, labels: 4, labels_per_hour: 0 }, "preferences")).toBe(
      "4 preferences in the last 7 days, but no labeling time recorded",
    );
    expect(fmtPace({ ...pace, active_hours: 0, labels: 0, labels_per_hour: 0 })).toBe("no queue labels in the last 7 days");
    expect(fmtEta(null, 5, "labels", 2)).toBe("too few labels to tell");
    expect(fmtEta(null, 5)).toBe("no labels in the last 7 days");
    expect(fmtEta(24 * 2.8 / 3600, 24)).toBe("about 1 min");
  });

  it("says 'not required' in the screening column of a project without screening", () => {
    expect(screeningText({ screening_status: "not_required", screening_agreement: null })).toBe("not required");
    expect(screeningText({ screening_status: "passed", screening_agreement: 0.9 })).toBe("passed (90.0%)");
    expect(screeningText({ screening_status: "pending", screening_agreement: null })).toBe("pending");
    expect(screeningText({ screening_status: null, screening_agreement: null })).toBe("—");
  });

  it("lists every generation with solutions or labels, so its steps add up to the headline", () => {
    // Imported solutions (no generation) served in generation 0: their labels count there.
    const rows = [
      { generation: null, solutions: 14, labeled: 6, open: 8, labels: 0, imported_labels: 0, steps_labeled: 0 },
      { generation: 0, solutions: 0, labeled: 0, open: 0, labels: 6, imported_labels: 0, steps_labeled: 18 },
      { generation: 1, solutions: 0, labeled: 0, open: 0, labels: 0, imported_labels: 0, steps_labeled: 0 },
    ];
    expect(generationLines(rows)).toEqual([
      "queued without a model: 6 of 14 solutions labeled at least once; their labels count under the generation that served them",
      "gen 0 (no solutions of its own): 6 labels served, 18 steps",
    ]);
    const unlabeled = [{ generation: 2, solutions: 4, labeled: 0, open: 4, labels: 0, imported_labels: 0, steps_labeled: 0 }];
    expect(generationLines(unlabeled)).toEqual(["gen 2: 0 of 4 solutions labeled at least once; no labels served"]);
    const one = [{ generation: 0, solutions: 1, labeled: 1, open: 0, labels: 1, imported_labels: 0, steps_labeled: 1 }];
    expect(generationLines(one)).toEqual(["gen 0: 1 of 1 solution labeled at least once; 1 label served, 1 step"]);
  });

  it("marks generations whose labels all came from an import file", () => {
    // PRM800K records carry PRM800K's own generation numbers, not this project's models.
    const rows = [
      { generation: null, solutions: 5, labeled: 5, open: 0, labels: 5, imported_labels: 5, steps_labeled: 52 },
      { generation: 0, solutions: 2, labeled: 2, open: 0, labels: 3, imported_labels: 1, steps_labeled: 9 },
      { generation: 6, solutions: 9, labeled: 9, open: 0, labels: 9, imported_labels: 9, steps_labeled: 76 },
    ];
    expect(generationLines(rows)).toEqual([
      "queued without a model: 5 of 5 solutions labeled at least once; 5 labels imported, 52 steps",
      "gen 0: 2 of 2 solutions labeled at least once; 2 labels served, 1 imported, 9 steps",
      "gen 6 (imported): 9 of 9 solutions labeled at least once; 9 labels imported, 76 steps",
    ]);
    expect(rows.map(generationLabel)).toEqual(["queued without a model", "gen 0", "gen 6 (imported)"]);
  });

  it("names a compare project's solutions and marks without a queue of solutions", () => {
    // Pairs are queued, never a solution: every solution sits without a generation, and the marks'
    // step labels count under the generation their pair was served in (with or without a model).
    const rows = [
      { generation: null, solutions: 6, labeled: 2, open: 6, labels: 0, imported_labels: 0, steps_labeled: 0 },
      { generation: 1, solutions: 0, labeled: 0, open: 0, labels: 2, imported_labels: 0, steps_labeled: 3 },
    ];
    expect(compareGenerationLines(rows)).toEqual([
      "all solutions: 2 of 6 solutions with a step label; their labels count under the generation their pair was served in",
      "pairs served in gen 1: 2 step labels from first-wrong marks, 3 steps",
    ]);
    expect(rows.map(compareGenerationLabel)).toEqual(["all solutions", "pairs served in gen 1"]);
    const unmarked = [{ generation: null, solutions: 6, labeled: 0, open: 6, labels: 0, imported_labels: 0, steps_labeled: 0 }];
    expect(compareGenerationLines(unmarked)).toEqual(["all solutions: 0 of 6 solutions with a step label"]);
    const imported = [
      { generation: null, solutions: 4, labeled: 4, open: 4, labels: 4, imported_labels: 4, steps_labeled: 20 },
      { generation: 6, solutions: 0, labeled: 0, open: 0, labels: 3, imported_labels: 3, steps_labeled: 9 },
      { generation: 0, solutions: 0, labeled: 0, open: 0, labels: 2, imported_labels: 1, steps_labeled: 5 },
    ];
    expect(compareGenerationLines(imported)).toEqual([
      "all solutions: 4 of 4 solutions with a step label; 4 labels imported, 20 steps",
      "gen 6 (imported): 3 labels imported, 9 steps",
      "pairs served in gen 0: 1 step label from first-wrong marks, 1 label imported, 5 steps",
    ]);
    for (const line of [...compareGenerationLines(rows), ...compareGenerationLines(imported)]) {
      expect(line).not.toContain("queued");
    }
    expect(compareGenerationsNote({ labels: 2, labels_imported: 0, steps_labeled: 3 })).toBe(
      "A compare project queues pairs, not solutions, so its solutions carry no generation; the step labels of " +
        "first-wrong marks count under the generation their pair was served in. Preferences are counted above. " +
        "Together: 2 step labels, 3 steps.",
    );
  });

  describe("the queue figure and the steps note agree with 'solutions open'", () => {
    const pace = { window_hours: 168, active_hours: 0, labels: 0, labels_per_hour: 0, min_labels: 3 };
    const base = {
      solutions_total: 15,
      solutions_labeled: 15,
      solutions_open: 0,
      solutions_complete: 15,
      labels_remaining: 0,
      steps_total: 243,
      steps_open: 0,
      steps_labeled: 138,
      labels: 15,
      labels_imported: 15,
      by_generation: [],
      pace,
      eta_hours: 0,
      eta_at: null,
    };

    it("a project imported already labeled: nothing queued, and it says why", () => {
      expect(stepsNote(base)).toBe("in 15 labels · 0 of 243 solution steps still queued");
      expect(stepsNote(base, 1)).toBe(
        "in 15 labels, plus 1 rated alternative (the model's step labels count them) · 0 of 243 solution steps still queued",
      );
      expect(queueFigure(base)).toEqual({
        label: "queue",
        value: "empty",
        note: "all 15 solutions arrived labeled in an import: import unlabeled ones to label here",
      });
    });

    it("labeled here: done; nothing imported yet: empty; work left: the ETA", () => {
      expect(queueFigure({ ...base, labels_imported: 3 })).toEqual({
        label: "queue",
        value: "done",
        note: "every solution has the labels it needs",
      });
      const none = { ...base, solutions_total: 0, solutions_labeled: 0, steps_total: 0, labels: 0, labels_imported: 0 };
      expect(queueFigure(none).value).toBe("empty");
      expect(queueFigure(none).note).toBe("no solutions yet: import some to label");
      const open = { ...base, solutions_open: 4, labels_remaining: 4, steps_open: 40, eta_hours: null, labels_imported: 11 };
      expect(queueFigure(open)).toEqual({
        label: "queue done in",
        value: "no labels in the last 7 days",
        note: "no queue labels in the last 7 days",
      });
      expect(stepsNote(open)).toBe("in 15 labels · 40 of 243 solution steps still queued");
      // Nothing labeled here yet (a fresh import): no estimate, said once, not twice.
      const fresh = { ...open, labels: 0, labels_imported: 0, steps_labeled: 0 };
      expect(queueFigure(fresh)).toEqual({
        label: "queue done in",
        value: "—",
        note: "no labels here yet: the estimate starts with the team's first ones",
      });
    });
  });

  it("shows held-out scores with intervals and says when the set is too small", () => {
    expect(fmtScore(1, [0.61, 1])).toBe("1.000 (0.61–1.00)");
    expect(fmtScore(0.5)).toBe("0.500");
    expect(fmtScore(undefined)).toBe("—");
    expect(heldoutSize({ n_steps: 6, n_solutions: 2, too_small: true })).toEqual({
      text: "6 held-out steps, 2 solutions: too small to mean anything (scores need 50+ steps and 10+ solutions)",
      tooSmall: true,
    });
    expect(heldoutSize({ n_steps: 900, n_solutions: 120, too_small: false }).text).toBe(
      "900 held-out steps, 120 solutions",
    );
    expect(heldoutSize({ n_steps: 3, n_solutions: 1, too_small: true }).text).toMatch(/^3 held-out steps, 1 solution:/);
    expect(heldoutSize({ accuracy: 0.5 }).tooSmall).toBe(false);
  });

  it("gives a run's held-out cell its solutions too, which can make 80 steps too small", () => {
    expect(heldoutCell({ n_steps: 80, n_solutions: 9 })).toBe("80 steps, 9 solutions");
    expect(heldoutCell({ n_steps: 1, n_solutions: 1 })).toBe("1 step, 1 solution");
    expect(heldoutCell({ n_steps: 1840 })).toBe("1,840 steps"); // a run from before solutions were recorded
    expect(heldoutCell({})).toBe("—");
  });

  it("says when agreement rests on too few solutions or pairs to read", () => {
    expect(agreementNotes(1, 1)).toEqual({
      alpha: "over 1 solution — too few to mean much (20+ needed)",
      pairs: "1 annotation pair — too few to mean much (20+ needed)",
    });
    expect(agreementNotes(0, 0)).toEqual({ alpha: "over 0 solutions", pairs: "0 annotation pairs" });
    expect(agreementNotes(240, 300, " (latest 200 overlapping solutions)")).toEqual({
      alpha: "over 240 solutions (latest 200 overlapping solutions)",
      pairs: "300 annotation pairs",
    });
  });

  it("says what the latest learning-curve point rests on", () => {
    const tiny = {
      run: 7,
      label_count: 19,
      accuracy: 1,
      first_error_f1: 1,
      n_steps: 4,
      n_solutions: 2,
      accuracy_ci: [0.51, 1],
      first_error_f1_ci: [0, 1],
      too_small: true,
    };
    expect(curveNote(tiny)).toEqual({
      text:
        "Latest point (run #7, 19 step labels): step accuracy 1.000 (0.51–1.00), first-error F1 1.000 (0.00–1.00) " +
        "(95% intervals in brackets), on 4 held-out steps, 2 solutions: too small to mean anything " +
        "(scores need 50+ steps and 10+ solutions).",
      tooSmall: true,
    });
    expect(curveNote({ ...tiny, too_small: false, first_error_f1: 0.45, grade_only_f1: 0.4 }).text).toContain(
      "on 4 held-out steps, 2 solutions. Without a model, the graded answer alone (one constant first " +
        "error per grade) scores 0.400 first-error F1 on these solutions; the PRM reads 0.050 more.",
    );
    expect(gradeOnlyNote({ first_error_f1: 0.3, grade_only_f1: 0.35 })).toContain(
      "the PRM reads 0.050 less: it places first errors worse than a constant does.",
    );
    expect(gradeOnlyNote({ first_error_f1: 0.35, grade_only_f1: 0.35 })).toContain("the PRM reads no more than that.");
    expect(gradeOnlyNote({ first_error_f1: 0.35 })).toBe("");
    expect(curveNote({ run: 3, label_count: 410, accuracy: 0.63, first_error_f1: 0.45 }).text).toBe(
      "Latest point (run #3, 410 step labels): step accuracy 0.630, first-error F1 0.450 " +
        "(trained before held-out sizes and intervals were recorded).",
    );
  });
});

describe("fmtWhen", () => {
  it("gives the year only when it is not this one", () => {
    const now = new Date(2026, 11, 7, 12, 0);
    expect(fmtWhen(new Date(2026, 10, 30, 23, 35).toISOString(), now)).toBe("30 Nov, 23:35");
    expect(fmtWhen(new Date(2022, 11, 24, 5, 1).toISOString(), now)).toBe("24 Dec 2022, 05:01");
    expect(fmtWhen(null, now)).toBe("—");
  });
});

describe("plural", () => {
  it("says 1 label and 2 labels", () => {
    expect(plural(1, "label")).toBe("1 label");
    expect(plural(2, "step")).toBe("2 steps");
    expect(plural(0, "label")).toBe("0 labels");
  });
});

describe("screeningShortage", () => {
  it("warns when screening asks for more answers than there are screening questions", () => {
    expect(screeningShortage({ screening_required: 2, screening_questions: 0 })).toBe(
      "Screening asks each annotator for 2 answers before regular work, but the project has 0 screening " +
        "questions: annotators who have not passed get nothing to label. Import screening questions or lower the " +
        "requirement (admin, the project's Screening required).",
    );
    expect(screeningShortage({ screening_required: 2, screening_questions: 5 })).toBe("");
    expect(screeningShortage({ screening_required: 0, screening_questions: 0 })).toBe("");
  });
});

describe("labels saved against random", () => {
  it("says the interval in the estimate's words: fewer or more step labels than random, no minus signs", () => {
    expect(savedInterval(35.4, 366.2)).toBe("35 to 366 fewer than random");
    expect(savedInterval(-366, -35)).toBe("35 to 366 more than random");
    expect(savedInterval(-366, 35)).toBe("from 366 more to 35 fewer than random");
    expect(savedInterval(-0.4, 12)).toBe("0 to 12 fewer than random");
    expect(savedInterval(-1500, 2500)).toBe("from 1,500 more to 2,500 fewer than random");
  });

  it("says a cost as a cost", () => {
    expect(savedAmount(211.3)).toBe("211 step labels");
    expect(savedAmount(1)).toBe("1 step label");
    expect(savedAmount(-211)).toBe("none: 211 step labels more than random would have needed");
    expect(savedAmount(-0.2)).toBe("none: as many step labels as random would have needed");
  });
});

describe("dashboard refresh and gold cells", () => {
  it("shows the clock time of the last refresh as HH:MM", () => {
    expect(fmtClock(new Date(2026, 0, 5, 9, 5))).toBe("09:05");
    expect(fmtClock(new Date(2026, 0, 5, 23, 59))).toBe("23:59");
  });

  it("shows the gold first-error share, or a dash without gold answers", () => {
    expect(goldFirstErrorText({ gold_first_error_rate: 0.4, gold_solutions: 5 })).toBe("40.0%");
    expect(goldFirstErrorText({ gold_first_error_rate: null, gold_solutions: 0 })).toBe("—");
  });
});

describe("flagNote", () => {
  const row = { below_threshold: true, gold_accuracy: 0.62, gold_solutions: 12, screening_status: "passed" };
  it("says in words why a row is flagged, so its red is not the only sign", () => {
    expect(flagNote(row, 0.8, 5)).toBe("flagged: gold accuracy below 80%");
    expect(flagNote({ ...row, gold_accuracy: 0.9, screening_status: "failed" }, 0.8, 5)).toBe("flagged: failed screening");
    expect(flagNote({ ...row, screening_status: "failed" }, 0.8, 5)).toBe("flagged: gold accuracy below 80%, failed screening");
  });
  it("says nothing for a row that is not flagged", () => {
    expect(flagNote({ ...row, below_threshold: false }, 0.8, 5)).toBeNull();
  });
});
