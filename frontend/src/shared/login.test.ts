import { describe, expect, it } from "vitest";

import { loggedOut, loginUrl } from "./login";

describe("an ended session", () => {
  it("is a 401, or a 403 with DRF's words for it; other refusals are not", () => {
    const drf = { detail: "Authentication credentials were not provided." };
    expect(loggedOut(401, drf)).toBe(true);
    expect(loggedOut(401, null)).toBe(true);
    expect(loggedOut(403, drf)).toBe(true);
    expect(loggedOut(403, { detail: "You may not do this." })).toBe(false);
    expect(loggedOut(409, drf)).toBe(false);
    expect(loggedOut(400, { "steps[0].rating": ["Required."] })).toBe(false);
  });

  it("sends the annotator to the login page and back to the page they were on", () => {
    expect(loginUrl("/annotate/algebra/")).toBe("/accounts/login/?next=%2Fannotate%2Falgebra%2F");
    expect(loginUrl("/annotate/a b/?x=1&y=2")).toBe("/accounts/login/?next=%2Fannotate%2Fa%20b%2F%3Fx%3D1%26y%3D2");
  });
});
