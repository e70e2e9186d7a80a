import { describe, expect, it } from "vitest";

import { splitToolCall } from "./stepbody";

// Pretty-printing a tool call's arguments went through JSON.parse and JSON.stringify, which
// rewrote the agent's numbers: an order id past 2^53 showed one off (…993 as …992), 2.50 as 2.5,
// 1e3 as 1000. An annotator judging whether the call was right read numbers it never sent.
describe("a tool call's arguments, pretty-printed", () => {
  it("keep every number and string as the agent wrote it", () => {
    expect(splitToolCall('get_order({"id": 9007199254740993, "total": 2.50, "n": 1e3})').args).toBe(
      '{\n  "id": 9007199254740993,\n  "total": 2.50,\n  "n": 1e3\n}',
    );
    expect(splitToolCall('pay({"to":"a\\u00e9\\"b","cents":[100,2.0],"meta":{},"tags":[]})').args).toBe(
      '{\n  "to": "a\\u00e9\\"b",\n  "cents": [\n    100,\n    2.0\n  ],\n  "meta": {},\n  "tags": []\n}',
    );
  });
  it("in both shapes of an OpenAI-style call", () => {
    expect(splitToolCall('{"name": "get", "arguments": {"id": 12345678901234567890}}')).toEqual({
      name: "get",
      args: '{\n  "id": 12345678901234567890\n}',
      json: true,
    });
    expect(splitToolCall('{"name": "get", "arguments": "{\\"id\\": 12345678901234567890}"}').args).toBe(
      '{\n  "id": 12345678901234567890\n}',
    );
  });
});
