import { describe, expect, it } from "vitest";

import { errorMessage, Http, HttpError, readCookie } from "./http";

function fakeFetch(status: number, body: string, seen: { url?: string; init?: RequestInit } = {}) {
  return async (url: string, init?: RequestInit) => {
    seen.url = url;
    seen.init = init;
    return new Response(status === 204 ? null : body, { status });
  };
}

describe("Http", () => {
  it("sends the CSRF header and JSON body on writes, none on reads", async () => {
    const seen: { url?: string; init?: RequestInit } = {};
    const http = new Http("/api/v1/", "tok", fakeFetch(201, '{"id": 3}', seen));
    expect(await http.request("POST", "training-runs/", {})).toEqual({ status: 201, data: { id: 3 } });
    expect(seen.url).toBe("/api/v1/training-runs/");
    const headers = seen.init?.headers as Record<string, string>;
    expect(headers["X-CSRFToken"]).toBe("tok");
    expect(seen.init?.body).toBe("{}");
    await http.request("GET", "me/");
    expect((seen.init?.headers as Record<string, string>)["X-CSRFToken"]).toBeUndefined();
  });

  it("json() returns a 2xx body and throws the server's message otherwise", async () => {
    expect(await new Http("", "", fakeFetch(200, '{"a": 1}')).json("GET", "/x")).toEqual({ a: 1 });
    const fail = new Http("", "", fakeFetch(403, '{"detail": "Leads only."}')).json("GET", "/x");
    await expect(fail).rejects.toThrow(HttpError);
    await expect(fail).rejects.toThrow("Leads only.");
    await expect(new Http("", "", fakeFetch(502, "<html>")).json("GET", "/x")).rejects.toThrow(
      "The server answered 502.",
    );
  });

  it("reads DRF field errors and cookies", () => {
    expect(errorMessage(400, { overlap: ["Must be at least 1."] })).toBe('overlap: ["Must be at least 1."]');
    expect(errorMessage(400, { non_field_errors: ["a", "b"] })).toBe("a b");
    expect(readCookie("csrftoken", "a=1; csrftoken=x%3Dy")).toBe("x=y");
    expect(readCookie("nope", "a=1")).toBeNull();
  });
});
