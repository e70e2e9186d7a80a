import { describe, expect, it } from "vitest";

import { busiest, fmtEta, fmtInt, fmtPct, fmtSeconds, generationName, shares, toUnixSeconds } from "./format";

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
    expect(generationName(null)).toBe("none");
    expect(generationName(2)).toBe("gen 2");
    expect(shares(["x", "y"], [1, 3])).toEqual([
      ["x", 1, 0.25],
      ["y", 3, 0.75],
    ]);
    expect(shares(["x"], [0])).toEqual([["x", 0, null]]);
  });
});
