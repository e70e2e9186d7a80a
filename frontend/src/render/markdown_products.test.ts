import { describe, expect, it } from "vitest";
import { renderMarkdown, renderStep } from "./markdown";

// GSM8K solutions (Math-Shepherd's lines) write products with `*` and calculator notes <<a*b=c>>:
// Markdown took the text between two products for emphasis, and "30*5=<<30*5=150>>150" showed
// as "305=<<305=150>>150" with the middle in italics, numbers an annotator then rated.
describe("a product written with *", () => {
  it("keeps its * between digits or brackets, with no emphasis", () => {
    expect(renderStep("Jonah would have burnt 30*5=<<30*5=150>>150 more calories.")).toBe(
      "<p>Jonah would have burnt 30*5=&lt;&lt;30*5=150&gt;&gt;150 more calories.</p>\n",
    );
    expect(renderMarkdown("So (2+3)*(4+1) = 25 and 2*(3)*4 = 24.", { inline: true })).toBe(
      "So (2+3)*(4+1) = 25 and 2*(3)*4 = 24.",
    );
  });
  it("leaves emphasis and bold as Markdown writes them", () => {
    expect(renderMarkdown("*so* the answer is **7**", { inline: true })).toBe("<em>so</em> the answer is <strong>7</strong>");
    expect(renderMarkdown("a *2*", { inline: true })).toBe("a <em>2</em>");
    expect(renderMarkdown("`3*4*5`", { inline: true })).toBe("<code>3*4*5</code>");
  });
});
