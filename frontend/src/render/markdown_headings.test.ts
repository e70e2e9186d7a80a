import { describe, expect, it } from "vitest";

import { renderMarkdown } from "./markdown";

describe("renderMarkdown headingLevel", () => {
  it("keeps headings as written by default", () => {
    expect(renderMarkdown("# Rules")).toBe("<h1>Rules</h1>\n");
  });

  it("demotes headings under the page's own, capped at h6", () => {
    const html = renderMarkdown("# A\n\n## B\n\n### C\n\n#### D\n\n###### F", { headingLevel: 3 });
    expect(html).toContain("<h3>A</h3>");
    expect(html).toContain("<h4>B</h4>");
    expect(html).toContain("<h5>C</h5>");
    expect(html).toContain("<h6>D</h6>");
    expect(html).toContain("<h6>F</h6>");
    expect(html).not.toMatch(/<h[12]/);
  });

  it("does not leak the level into the next render", () => {
    renderMarkdown("# A", { headingLevel: 3 });
    expect(renderMarkdown("# A")).toBe("<h1>A</h1>\n");
  });
});
