import { describe, expect, it } from "vitest";

import { REPEATED_SUBMIT_MS, RepeatedSubmitGuard } from "./repeat";

describe("RepeatedSubmitGuard", () => {
  it("takes an Enter on an untouched task just shown as the previous submit's", () => {
    const c = { t: 50_000 };
    const guard = new RepeatedSubmitGuard(() => c.t);
    expect(guard.isRepeat(true)).toBe(false); // nothing shown yet: the page's first task
    guard.shown();
    c.t += 300;
    expect(guard.isRepeat(true)).toBe(true);
    expect(guard.isRepeat(false)).toBe(false); // work started: a real (not ready) submit
    c.t += REPEATED_SUBMIT_MS;
    expect(guard.isRepeat(true)).toBe(false); // later: a deliberate press, told what is missing
  });
});
