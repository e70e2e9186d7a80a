import { describe, expect, it } from "vitest";

import { summarizeSubmit } from "./refused";

describe("summarizeSubmit", () => {
  it("lists the ratings, flags, alternatives and finish of a refused submit", () => {
    const submit = {
      idempotency_key: "k",
      finish_reason: "found_error",
      total_time_ms: 1000,
      reason: "",
      steps: [
        { index: 0, rating: 1, flagged: false, alternatives: [], human_completion: null },
        { index: 1, rating: -1, flagged: true, alternatives: [{ text: "x", rating: 1, flagged: false }] },
      ],
    };
    expect(summarizeSubmit(submit)).toBe(
      "Step 1 Positive · Step 2 Negative (flagged), 1 alternative · finish: found error",
    );
    expect(summarizeSubmit({ finish_reason: "give_up", reason: " too long ", steps: [] })).toBe(
      "finish: give up · reason: “too long”",
    );
    expect(summarizeSubmit(null)).toBe("no labels");
    const critiqued = { steps: [{ index: 0, rating: -1, critique: " 3 + 4 is 7, not 8. " }] };
    expect(summarizeSubmit(critiqued)).toBe("Step 1 Negative, critique “3 + 4 is 7, not 8.”");
    const long = summarizeSubmit({ steps: [{ index: 0, rating: -1, critique: "x".repeat(300) }] });
    expect(long.length).toBeLessThan(160);
  });
});
