import { describe, expect, it } from "vitest";

import { ActiveTimer } from "./timer";

function clock(start = 1_000_000) {
  const c = { t: start, now: () => c.t };
  return c;
}

describe("ActiveTimer", () => {
  it("counts active time and resumes from a saved value", () => {
    const c = clock();
    const timer = new ActiveTimer(5_000, c.now);
    expect(timer.elapsedMs()).toBe(5_000);
    timer.activity();
    c.t += 10_000;
    expect(timer.elapsedMs()).toBe(15_000);
  });

  it("stops one idle period after the last activity", () => {
    const c = clock();
    const timer = new ActiveTimer(0, c.now, 60_000);
    timer.activity();
    c.t += 30_000;
    timer.activity();
    c.t += 300_000;
    expect(timer.elapsedMs()).toBe(90_000);
    expect(timer.running).toBe(false);
    timer.activity();
    c.t += 1_000;
    expect(timer.elapsedMs()).toBe(91_000);
  });

  it("pauses while the tab is hidden", () => {
    const c = clock();
    const timer = new ActiveTimer(0, c.now);
    timer.activity();
    c.t += 2_000;
    timer.setVisible(false);
    c.t += 50_000;
    timer.activity(); // input while hidden does not count
    c.t += 5_000;
    expect(timer.elapsedMs()).toBe(2_000);
    timer.setVisible(true);
    c.t += 3_000;
    expect(timer.elapsedMs()).toBe(5_000);
  });
});
