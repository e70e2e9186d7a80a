import { describe, expect, it } from "vitest";

import type { SubmitOut } from "../api/types";
import { errorMessage, readCookie } from "../shared/http";
import { assignmentFinished, backoffMs, newIdempotencyKey, parseTask, submitUntilAcknowledged } from "./api";

describe("submitUntilAcknowledged", () => {
  it("retries network errors and 5xx with the same payload until a 2xx", async () => {
    const answers: Array<() => { status: number; data: SubmitOut | null }> = [
      () => {
        throw new TypeError("Failed to fetch");
      },
      () => ({ status: 502, data: null }),
      () => ({ status: 201, data: { annotation_id: 7, assignment_id: 5, created: true, next: null } }),
    ];
    const sleeps: number[] = [];
    const retries: string[] = [];
    const out = await submitUntilAcknowledged(async () => answers.shift()!(), {
      sleep: async (ms) => void sleeps.push(ms),
      onRetry: (_n, why) => retries.push(why),
    });
    expect(out).toEqual({ ok: true, status: 201, data: { annotation_id: 7, assignment_id: 5, created: true, next: null } });
    expect(retries).toEqual(["Failed to fetch", "server error 502"]);
    expect(sleeps).toHaveLength(2);
  });

  it("stops at a 4xx and reports the server's message", async () => {
    const refused = { status: 409, data: { detail: "Lease taken." } as unknown as SubmitOut };
    const out = await submitUntilAcknowledged(async () => refused, {
      sleep: async () => undefined,
    });
    expect(out).toMatchObject({ ok: false, status: 409, message: "Lease taken." });
  });
});

describe("helpers", () => {
  it("backoff doubles up to 30 s", () => {
    expect(backoffMs(0, () => 0.5)).toBe(500);
    expect(backoffMs(3, () => 0.5)).toBe(4000);
    expect(backoffMs(20, () => 0.5)).toBe(30000);
  });

  it("reads cookies and error messages", () => {
    expect(readCookie("csrftoken", "a=1; csrftoken=abc%3D; b=2")).toBe("abc=");
    expect(readCookie("x", "a=1")).toBeNull();
    expect(errorMessage(400, { steps: ["bad"] })).toBe('steps: ["bad"]');
    expect(errorMessage(400, { non_field_errors: ["a", "b"] })).toBe("a b");
    expect(errorMessage(500, null)).toBe("The server answered 500.");
  });

  it("makes v4 UUID keys", () => {
    const k = newIdempotencyKey();
    expect(k).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(newIdempotencyKey()).not.toBe(k);
  });

  it("reads a served task", () => {
    const served = {
      id: 5,
      assignment_id: 5,
      project: "algebra",
      lease_expires_at: "2026-01-01T00:00:00Z",
      lease_seconds: 1800,
      generation: null,
      mode: "phase1",
      problem: { text: "P", ground_truth_answer: "" },
      kind: "math" as const,
      critique_required: false,
      steps: [{ index: 0, text: "s", rated: true }],
      draft: { v: 1 },
    };
    expect(parseTask(served)).toEqual({
      assignmentId: 5,
      mode: "phase1",
      problem: { text: "P", groundTruthAnswer: null },
      steps: [{ index: 0, text: "s" }],
      draft: { v: 1 },
      kind: "math",
      language: "",
      tests: null,
      critiqueRequired: false,
    });
    expect(parseTask({ ...served, mode: "phase2", problem: { text: "P" } }).problem.groundTruthAnswer).toBeNull();
    const trace = parseTask({
      ...served,
      kind: "trace",
      critique_required: true,
      steps: [
        { index: 0, text: "look(1)", type: "tool_call", rated: true },
        { index: 1, text: "out", type: "observation", rated: false },
      ],
    });
    expect([trace.kind, trace.critiqueRequired]).toEqual(["trace", true]);
    expect(trace.steps).toEqual([
      { index: 0, text: "look(1)", type: "tool_call" },
      { index: 1, text: "out", type: "observation", rated: false },
    ]);
  });
});

describe("assignmentFinished", () => {
  const said = (detail: string, code?: string) => (code ? { detail, code } : { detail });
  const finished = "assignment_finished";
  it("is true where the page should move on: not ours, or submitted or skipped already", () => {
    expect(assignmentFinished(404, said("No such assignment of yours."))).toBe(true);
    expect(assignmentFinished(404, null)).toBe(true);
    expect(assignmentFinished(409, said("This assignment was already submitted.", finished))).toBe(true);
    expect(assignmentFinished(409, said("This assignment was skipped; claim a new task.", finished))).toBe(true);
  });

  it("is false where work on the page is still to keep", () => {
    const taken = "Your lease expired and another annotator took this solution. Your draft is kept.";
    expect(assignmentFinished(409, said(taken))).toBe(false);
    expect(assignmentFinished(409, said("This assignment keeps a refused submit (see refused_submits); save null to dismiss it."))).toBe(false);
    expect(assignmentFinished(409, said("This assignment was already submitted."))).toBe(false); // words alone decide nothing
    expect(assignmentFinished(409, null)).toBe(false);
    expect(assignmentFinished(400, said("This assignment was already submitted.", finished))).toBe(false);
    expect(assignmentFinished(401, said("Authentication credentials were not provided."))).toBe(false);
  });
});
