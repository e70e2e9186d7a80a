import { describe, expect, it } from "vitest";

import { highlight } from "../render/highlight";
import { lineRanges } from "../render/code";
import { splitToolCall } from "./stepbody";

describe("code and trace steps", () => {
  it("number code lines across steps", () => {
    expect(lineRanges(["def f(x):", "    y = x\n    return y\n", "print(f(1))"])).toEqual([
      [1, 1],
      [2, 3],
      [4, 4],
    ]);
  });

  it("split a tool call into its name and pretty JSON arguments", () => {
    expect(splitToolCall('search({"query": "Paris", "k": 3})')).toEqual({
      name: "search",
      args: '{\n  "query": "Paris",\n  "k": 3\n}',
      json: true,
    });
    expect(splitToolCall('{"tool": "calc"}').name).toBeNull();
    expect(splitToolCall("ls -la /tmp")).toEqual({ name: null, args: "ls -la /tmp", json: false });
    expect(splitToolCall('{"name": "search", "arguments": "{\\"q\\": \\"x\\"}"}')).toEqual({
      name: "search",
      args: '{\n  "q": "x"\n}',
      json: true,
    });
    expect(splitToolCall('{"name": "calc", "arguments": {"e": "1+1"}}').name).toBe("calc");
  });

  it("highlight known languages with escaped text, and leave others alone", () => {
    const html = highlight('if x < 1: return "<b>"', "python") ?? "";
    expect(html).toContain('<span class="hljs-keyword">if</span>');
    expect(html).toContain("&lt;b&gt;");
    expect(highlight("x", "py")).not.toBeNull();
    expect(highlight("x", "plaintext")).toBeNull();
  });
});
