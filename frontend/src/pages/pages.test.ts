import { describe, expect, it } from "vitest";

import { autolabelBody, autolabelOutcome, autolabelProgress } from "./autolabel";
import { exportBody, optionApplies } from "./exports";
import { COMPARE_ONLY_FIELDS, fieldApplies, slugify, STEP_ONLY_FIELDS } from "./forms";
import { failureMessage, importSummary, lineErrorText, refusedMessage } from "./imports";

describe("slugify", () => {
  it("makes a Django slug from a project name", () => {
    expect(slugify("Algebra, round 2")).toBe("algebra-round-2");
    expect(slugify("  Géométrie — été 2026!  ")).toBe("geometrie-ete-2026");
    expect(slugify("$$$")).toBe("");
    expect(slugify("a".repeat(49) + " bc").length).toBeLessThanOrEqual(50);
    expect(slugify("a".repeat(49) + " bc").endsWith("-")).toBe(false);
  });
});

describe("fieldApplies", () => {
  it("leaves the step-only settings out of a compare project's form", () => {
    for (const field of STEP_ONLY_FIELDS) {
      expect(fieldApplies(field, "compare")).toBe(false);
      expect(fieldApplies(field, "steps")).toBe(true);
    }
    expect(STEP_ONLY_FIELDS).toContain("selection_strategy");
    expect(STEP_ONLY_FIELDS).toContain("control_share");
    for (const field of ["overlap", "qc_rate", "retrain_every", "name"]) expect(fieldApplies(field, "compare")).toBe(true);
  });

  it("shows the pair bound only while Compare is chosen", () => {
    expect(COMPARE_ONLY_FIELDS).toContain("pairs_per_problem");
    expect(fieldApplies("pairs_per_problem", "compare")).toBe(true);
    expect(fieldApplies("pairs_per_problem", "steps")).toBe(false);
    for (const field of ["overlap", "qc_rate", "retrain_every", "name"]) expect(fieldApplies(field, "steps")).toBe(true);
  });
});

describe("exportBody", () => {
  it("leaves out empty fields and joins finish reasons", () => {
    const form = new FormData();
    form.append("csrfmiddlewaretoken", "x");
    form.append("format", "trl");
    form.append("since", " ");
    form.append("finish_reason", "solution");
    form.append("finish_reason", "found_error");
    expect(exportBody(form)).toEqual({ format: "trl", finish_reason: "solution,found_error", gzip: false });
    form.append("gzip", "on");
    expect(exportBody(form).gzip).toBe(true);
  });
});

describe("exportBody with TRL options", () => {
  const form = (format: string) => {
    const data = new FormData();
    data.append("format", format);
    data.append("neutral", "drop");
    data.append("alternatives", "drop");
    return data;
  };

  it("sends neutral and alternatives with the TRL format", () => {
    expect(exportBody(form("trl"))).toEqual({ format: "trl", neutral: "drop", alternatives: "drop", gzip: false });
  });

  it("leaves them out of other formats", () => {
    expect(exportBody(form("prm800k"))).toEqual({ format: "prm800k", gzip: false });
    expect(exportBody(form("critique"))).toEqual({ format: "critique", gzip: false });
  });

  it("knows which options go with which format", () => {
    expect(optionApplies("neutral", "trl")).toBe(true);
    expect(optionApplies("neutral", "math_shepherd")).toBe(true);
    expect(optionApplies("alternatives", "prm800k")).toBe(false);
    expect(optionApplies("alternatives", "math_shepherd")).toBe(false);
    expect(optionApplies("labels", "math_shepherd")).toBe(true);
    expect(optionApplies("labels", "prm800k")).toBe(false);
    expect(optionApplies("ties", "preference")).toBe(true);
    expect(optionApplies("ties", "trl")).toBe(false);
    expect(optionApplies("since", "prm800k")).toBe(true);
  });

  it("sends Math-Shepherd's and preference's own options only with them", () => {
    const data = new FormData();
    data.append("format", "math_shepherd");
    data.append("labels", "auto");
    data.append("ties", "include");
    data.append("alternatives", "drop");
    expect(exportBody(data)).toEqual({ format: "math_shepherd", labels: "auto", gzip: false });
    data.set("format", "preference");
    expect(exportBody(data)).toEqual({ format: "preference", ties: "include", gzip: false });
  });

  it("sends none of the options of people's labels with automatic labels", () => {
    const data = new FormData();
    for (const [key, value] of [["format", "trl"], ["labels", "auto"], ["neutral", "negative"], ["generation", "0,1"],
      ["split", "test"], ["qc", "exclude"], ["finish_reason", "solution"], ["labeler", "x"]]) data.append(key, value);
    expect(exportBody(data)).toEqual({ format: "trl", labels: "auto", gzip: false });
    data.set("labels", "human");
    expect(exportBody(data)).toMatchObject({ neutral: "negative", generation: "0,1", finish_reason: "solution" });
    expect(optionApplies("since", "trl", "auto")).toBe(false);
    expect(optionApplies("since", "prm800k", "auto")).toBe(true); // labels applies to trl and math_shepherd only
  });
});

describe("importSummary", () => {
  it("says how many solutions were imported", () => {
    const job = { id: 1, status: "succeeded" as const };
    expect(importSummary({ ...job, counters: { solutions_created: 14, problems_created: 13 } })).toBe(
      "Imported 14 solutions (13 new problems).",
    );
    expect(importSummary({ ...job, counters: { solutions_created: 1, problems_created: 0, duplicates: 3 } })).toBe(
      "Imported 1 solution (0 new problems, 3 lines already in the project).",
    );
    expect(importSummary({ ...job, counters: { solutions_created: 0, problems_created: 0, duplicates: 7 } })).toBe(
      "Nothing new: all 7 lines were already in the project.",
    );
    expect(importSummary({ ...job, counters: { solutions_created: 0, annotations_created: 2, duplicates: 1 } })).toBe(
      "Imported 0 solutions (2 with labels, 1 line already in the project).",
    );
    expect(importSummary({ ...job, counters: { solutions_created: 7, problems_created: 7, auto_labels_created: 25 } })).toBe(
      "Imported 7 solutions (25 automatic step labels kept, 7 new problems).",
    );
    expect(importSummary({ ...job, counters: { solutions_created: 1, problems_created: 1 } })).toBe(
      "Imported 1 solution (1 new problem).",
    );
    expect(importSummary({ ...job, counters: { solutions_created: 5, problems_created: 2, pairs_created: 4 } })).toBe(
      "Imported 5 solutions (2 new problems, 4 new pairs to compare).",
    );
    expect(importSummary({ ...job, counters: { solutions_created: 2, problems_created: 2, pairs_created: 0 } })).toBe(
      "Imported 2 solutions (2 new problems, no new pairs to compare: a pair needs two solutions of one problem).",
    );
    // a fourth solution of a problem that has its 3 pairs: not "a pair needs two solutions"
    expect(importSummary({ ...job, counters: { solutions_created: 1, problems_created: 0, pairs_created: 0 } })).toBe(
      "Imported 1 solution (0 new problems, no new pairs to compare: a problem gets at most 3 pairs, and theirs had them already).",
    );
    // the project's own bound, not 3 (a project made with import_prm800k --pairs-per-problem 1)
    expect(importSummary({ ...job, counters: { solutions_created: 1, problems_created: 0, pairs_created: 0 } }, 1)).toBe(
      "Imported 1 solution (0 new problems, no new pairs to compare: a problem gets at most 1 pair, and theirs had them already).",
    );
  });
});

describe("refusedMessage", () => {
  it("says why the server refused the upload", () => {
    expect(refusedMessage(400, { file: ["The submitted file is empty."] })).toBe(
      "The submitted file is empty. Nothing was imported.",
    );
    expect(refusedMessage(413, { detail: "The upload is 9 bytes; the limit is 5 bytes." })).toBe(
      "The upload is 9 bytes; the limit is 5 bytes. Nothing was imported.",
    );
    expect(refusedMessage(502, null)).toBe("The server refused the upload (HTTP 502). Nothing was imported.");
  });
});

describe("failureMessage", () => {
  const job = { id: 1, status: "failed" as const };
  it("names the file, line and field of each bad line", () => {
    const errors = [
      { line: 2, field: "(json)", message: "not valid JSON: unexpected end of data at the end of the line" },
      { line: 4, field: "problem", message: "missing" },
    ];
    expect(failureMessage({ ...job, filename: "bad.jsonl", counters: { bad_lines: 2 }, errors })).toEqual({
      text: "2 bad lines; nothing was imported. Fix the file and import it again.",
      // "(json)" is no field of the record: only the line is named.
      lines: [
        "bad.jsonl, line 2: not valid JSON: unexpected end of data at the end of the line",
        "bad.jsonl, line 4, field problem: missing",
      ],
    });
  });
  it("names the line and field when the job has no file name", () => {
    expect(lineErrorText({ line: 2, field: "question.problem", message: "missing" })).toBe(
      "Line 2, field question.problem: missing",
    );
  });
  it("says a file of blank lines is empty, not that it has a bad line 0", () => {
    const empty = { line: 0, field: "(file)", message: "the file is empty: it has no JSON lines" };
    expect(failureMessage({ ...job, counters: { bad_lines: 1 }, errors: [empty] })).toEqual({
      text: "The file is empty: it has no JSON lines. Nothing was imported. Fix the file and import it again.",
      lines: [],
    });
  });
});

describe("autolabelBody", () => {
  it("sends numbers as numbers and leaves empty fields to the API's defaults", () => {
    const form = new FormData();
    for (const [key, value] of [["csrfmiddlewaretoken", "t"], ["base_url", " http://gpu:8000/v1 "], ["model", "m"],
      ["rollouts", "4"], ["max_tokens", ""], ["temperature", "0.5"], ["concurrency", "many"], ["search", "full"]]) {
      form.append(key, value);
    }
    expect(autolabelBody(form)).toEqual({
      base_url: "http://gpu:8000/v1",
      model: "m",
      rollouts: 4,
      temperature: 0.5,
      concurrency: "many", // not a number: sent as typed, so the API names the field
      search: "full",
    });
  });

  it("says where a running job is", () => {
    const job = { id: 3, status: "running" as const, solutions_total: 10, solutions_done: 4, steps_labeled: 9,
      completions_used: 72, retries: 1, error: "" };
    expect(autolabelProgress(job)).toBe("Labeling… 4 / 10 solutions · 72 completions · 1 retry");
    expect(autolabelProgress({ ...job, status: "created" })).toBe("Waiting for a worker…");
  });

  it("says how a job ended, a stopped one with what it kept", () => {
    const job = { id: 3, status: "cancelled" as const, solutions_total: 10, solutions_done: 1, steps_labeled: 4,
      completions_used: 24, retries: 0, error: "" };
    expect(autolabelOutcome(job)).toEqual({
      ok: true,
      text: "Job 3 stopped after 1 solution of 10 (24 completions). Its labels stay; Start labeling resumes where it stopped.",
    });
    expect(autolabelOutcome({ ...job, solutions_total: 0, solutions_done: 0 }).text).toBe(
      "Job 3 stopped before a worker took it; nothing was labeled.",
    );
    expect(autolabelOutcome({ ...job, status: "failed", error: "HTTP 404" })).toEqual({ ok: false, text: "Job 3 failed: HTTP 404." });
    expect(autolabelOutcome({ ...job, status: "succeeded", solutions_done: 10 }).text).toMatch(/^Job 3 labeled 10 solutions \(4 steps/);
    expect(autolabelOutcome({ ...job, status: "succeeded", solutions_done: 10 }).text).not.toContain("not called");
    // every answer right: no rollout was needed, so nothing has tried the server's address yet
    expect(autolabelOutcome({ ...job, status: "succeeded", solutions_done: 4, completions_used: 0 }).text).toBe(
      "Job 3 labeled 4 solutions (4 steps, 0 completions). The model server was not called: every solution's own " +
        "answer was right, which makes each of its steps +. The dashboard compares them with people's labels.",
    );
  });
});
