import { describe, expect, it } from "vitest";

import { refusalOf } from "./autolabel";

const LABELS: Record<string, string> = { base_url: "Model server", model: "Model", rollouts: "Rollouts per step" };
const labelOf = (field: string): string | null => LABELS[field] ?? null;

describe("refusalOf", () => {
  it("names the refused fields by their labels on the form, not the API's names", () => {
    const refusal = refusalOf(400, { base_url: ["This field is required."], model: ["This field is required."] }, labelOf);
    expect(refusal.message).toBe("The job was not started: correct the 2 fields marked above.");
    expect(refusal.lines).toEqual(["Model server: This field is required.", "Model: This field is required."]);
    expect(refusal.fields).toEqual([
      { name: "base_url", reasons: "This field is required." },
      { name: "model", reasons: "This field is required." },
    ]);
    expect(refusalOf(400, { rollouts: ["Ensure this value is less than or equal to 64."] }, labelOf).message).toBe(
      "The job was not started: correct the field marked above.",
    );
  });

  it("says a reason about no field by itself, and a 409's detail as it is", () => {
    const nothing = refusalOf(400, { solutions: ["nothing to label: rollouts need open solutions"] }, labelOf);
    expect(nothing).toEqual({ message: "The job was not started.", lines: ["Nothing to label: rollouts need open solutions"], fields: [] });
    const busy = refusalOf(409, { detail: "Job 4 of this project is running; one at a time." }, labelOf);
    expect(busy).toEqual({ message: "Job 4 of this project is running; one at a time.", lines: [], fields: [] });
    expect(refusalOf(502, {}, labelOf).message).toBe("The job was not started (HTTP 502).");
  });
});
