import { describe, expect, it } from "vitest";

import { COUNT_INCRS, curvePoints, fitLabel } from "./charts";

describe("the learning curve's markers", () => {
  it("keep metrics at the same value visible, one ring inside the other", () => {
    // step accuracy and first-error F1 both at 1.0 drew one dot over the other
    const markers = [0, 1, 2, 3].map((i) => curvePoints(i, 4, `c${i}`));
    const sizes = markers.map((m) => m.size!);
    // drawn in order: each later marker fits inside the ring it lands in, with room between the
    // two strokes (half of each stroke lies outside its circle's radius)
    for (let i = 1; i < sizes.length; i++) {
      const gap = (sizes[i - 1]! - sizes[i]!) / 2 - (markers[i - 1]!.width! + markers[i]!.width!) / 2;
      expect(gap).toBeGreaterThan(0);
    }
    expect(markers.slice(0, -1).every((m) => m.fill === "#fff")).toBe(true); // rings: hollow
    expect(markers.at(-1)).toMatchObject({ fill: "c3", stroke: "c3", show: true }); // the last: a dot
    expect(curvePoints(0, 1, "c0")).toMatchObject({ size: 5, fill: "c0" }); // a single metric: a plain dot
  });
});

describe("bar labels", () => {
  it("are cut to the room under their bar, so neighbours do not run together", () => {
    expect(fitLabel("positive (+1)", 200)).toBe("positive (+1)");
    expect(fitLabel("positive (+1)", 60)).toBe("positive"); // 8 characters in 60 px: the note in brackets goes first
    expect(fitLabel("positive (+1)", 50)).toBe("positi…");
    expect(fitLabel("queued without a model", 70)).toBe("queued wi…");
    expect(fitLabel("gen 0", 5)).toBe("0"); // a round keeps its number
    expect(fitLabel("gen 6 (imported)", 90)).toBe("6 (imported)");
    expect(fitLabel("gen 12 (imported)", 40)).toBe("12");
  });
});

describe("COUNT_INCRS", () => {
  it("steps a count axis by whole numbers only", () => {
    expect(COUNT_INCRS.slice(0, 8)).toEqual([1, 2, 5, 10, 20, 25, 50, 100]);
    expect(COUNT_INCRS.every(Number.isInteger)).toBe(true);
  });
});
