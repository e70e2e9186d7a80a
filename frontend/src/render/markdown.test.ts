import { describe, expect, it } from "vitest";

import { extractMath, renderAnswer, renderMarkdown, renderStep } from "./markdown";

describe("extractMath", () => {
  it("finds every delimiter form", () => {
    const { math } = extractMath("a $x$ b $$y$$ c \\(z\\) d \\[w\\]", "n");
    expect(math).toEqual([
      { tex: "x", display: false },
      { tex: "y", display: true },
      { tex: "z", display: false },
      { tex: "w", display: true },
    ]);
  });

  it("takes LaTeX display environments written without $$ as display math (PRM800K steps do)", () => {
    const step = "For the subsequence, I have:\n\\begin{align*} a_{2k} &= r_k a_{2k-1} \\\\ a_{2k+1} &= r_k a_{2k} \\end{align*}";
    const { text, math } = extractMath(step, "n");
    expect(math).toEqual([
      { tex: "\\begin{align*} a_{2k} &= r_k a_{2k-1} \\\\ a_{2k+1} &= r_k a_{2k} \\end{align*}", display: true },
    ]);
    expect(text).toBe("For the subsequence, I have:\nMATHnX0X");
    const html = renderMarkdown(step);
    expect(html).toContain("katex-display");
    expect(html.replace(/<annotation[\s\S]*?<\/annotation>/g, "")).not.toContain("begin{align"); // only in MathML's source
    // Inside $$ it stays part of that formula; an unclosed or unknown environment stays text.
    expect(extractMath("$$\\begin{align}x\\end{align}$$", "n").math).toEqual([
      { tex: "\\begin{align}x\\end{align}", display: true },
    ]);
    expect(extractMath("\\begin{align*} x = 1", "n").math).toEqual([]);
    expect(extractMath("\\begin{itemize}x\\end{itemize}", "n").math).toEqual([]);
  });

  it("leaves prices and escaped dollars as text", () => {
    expect(extractMath("costs $5 and $6 each", "n").math).toEqual([]);
    expect(extractMath("a \\$ sign and $ x$", "n").math).toEqual([]);
    expect(extractMath("pay $ 3", "n").math).toEqual([]);
  });

  it("keeps underscores inside math away from Markdown emphasis", () => {
    const html = renderMarkdown("$a_1 + a_2$ and *b*");
    expect(html).toContain("katex");
    expect(html).toContain("<em>b</em>");
    expect(html).not.toContain("<em>1");
  });
});

describe("renderMarkdown safety", () => {
  it("escapes raw HTML", () => {
    const html = renderMarkdown("<img src=x onerror=alert(1)> <script>alert(2)</script>");
    expect(html).not.toContain("<img");
    expect(html).not.toContain("<script");
    expect(html).toContain("&lt;img src=x onerror=alert(1)&gt;");
  });

  it("renders KaTeX \\href and \\htmlClass without links or classes when untrusted", () => {
    const html = renderMarkdown("$\\href{javascript:alert(1)}{x}$ and $\\htmlClass{evil}{y}$ and $\\url{javascript:z}$");
    expect(html).not.toMatch(/<a\b/);
    expect(html).not.toContain('class="evil"');
    expect(html).toContain("katex");
  });

  it("drops javascript: Markdown links and opens others safely", () => {
    const bad = renderMarkdown("[x](javascript:alert(1))");
    expect(bad).not.toContain('href="javascript');
    const good = renderMarkdown("[docs](https://example.org)");
    expect(good).toContain('rel="noopener noreferrer nofollow"');
  });

  it("does not throw on broken TeX and shows it as an error", () => {
    const html = renderMarkdown("$\\frac{1}{$");
    expect(html).toContain("katex");
  });

  it("cannot be tricked by text that imitates a placeholder", () => {
    const html = renderMarkdown("MATHdeadbeefX0X and $x$");
    expect(html).toContain("MATHdeadbeefX0X");
  });

  it("renders display math in its own block", () => {
    expect(renderMarkdown("$$\\sum_i i$$")).toContain("katex-display");
    expect(renderMarkdown("\\[x\\]")).toContain("katex-display");
  });
});

describe("math outside text", () => {
  it("keeps a formula in an image's alt text as its source, never KaTeX markup in the attribute", () => {
    const html = renderMarkdown("![area $\\pi r^2$ here](https://example.org/c.png) and $x$");
    expect(html).toContain('alt="area $\\pi r^2$ here"');
    const img = /<img [^>]*>/.exec(html)?.[0] ?? "";
    expect(img).not.toContain("katex");
    expect(img).not.toContain("<span");
    expect(html).toContain('class="katex"'); // the formula in the text is still typeset
  });

  it("escapes a formula that lands in a link title or URL", () => {
    const html = renderMarkdown('[x](https://example.org/a "t $a<b$")');
    expect(html).toContain('title="t $a&lt;b$"');
    expect(html).not.toMatch(/title="[^"]*katex/);
  });
});

describe("renderStep", () => {
  it("shows PRM800K's '# Answer' step as an answer line, not a heading", () => {
    const html = renderStep("# Answer\n\n$\\frac{1}{2}$");
    expect(html).not.toContain("<h1");
    expect(html).toMatch(/^<p class="sl-answer"><span class="sl-answer-label">Answer:<\/span> <span class="katex/);
  });

  it("keeps text before the answer line and renders other steps as Markdown", () => {
    const html = renderStep("So it is 10.\n# Answer\n\n10");
    expect(html).toContain("<p>So it is 10.</p>");
    expect(html).toContain('<span class="sl-answer-label">Answer:</span> 10</p>');
    expect(renderStep("# Answer")).toContain("(none given)");
    expect(renderStep("Answer is *7*")).toBe("<p>Answer is <em>7</em></p>\n");
  });
});

describe("renderAnswer", () => {
  it("typesets PRM800K's bare LaTeX answers", () => {
    for (const answer of ["\\frac{1}{6}", "25\\pi", "8\\sqrt{2}", "x^2"]) {
      const html = renderAnswer(answer);
      expect(html).toContain('class="katex"');
      expect(html).toContain("katex-html"); // typeset, not shown as source
    }
  });
  it("keeps delimited math, plain numbers and words as Markdown", () => {
    expect(renderAnswer("$\\frac{1}{2}$")).toContain('class="katex"');
    expect(renderAnswer("10")).toBe("10");
    expect(renderAnswer("Monday")).toBe("Monday");
    expect(renderAnswer("<b>x</b>")).not.toContain("<b>");
  });
  it("typesets the answer line of a step", () => {
    expect(renderStep("# Answer\n\n\\frac{1}{11}")).toContain('class="katex"');
  });
  it("typesets an answer whose only dollar is an escaped one (MATH's \\$32,\\!348)", () => {
    // As Markdown, `\!` lost its backslash: the ground truth read "$32,!348".
    const html = renderAnswer("\\$32,\\!348");
    expect(html).toContain('class="katex"');
    expect(html).not.toContain(",!");
    expect(renderAnswer("\\$18.90")).toContain('class="katex"');
    expect(renderStep("# Answer\n\n\\$32,\\!348")).not.toContain(",!");
    // an unescaped dollar still means Markdown with its own delimiters
    expect(renderAnswer("$\\frac{1}{2}$ dollars")).toContain("dollars");
  });
});

describe("a bare \\boxed{} answer (models write one without $: ProcessBench's solutions do)", () => {
  const visible = (html: string) => html.replace(/<span class="katex-mathml">[\s\S]*?<\/span><span class="katex-html"/g, "<span").replace(/<[^>]+>/g, "");

  it("is typeset, nested braces and all", () => {
    const html = renderStep("So the remainder is \\boxed{9}, and the area is \\boxed{\\frac{1}{3}}.");
    expect(html).toContain("katex");
    expect(html).toContain("boxed"); // KaTeX's box, not the source
    expect(visible(html)).not.toContain("\\boxed");
    expect(visible(html)).not.toContain("\\frac");
    expect(extractMath("is \\boxed{\\frac{1}{3}}.", "n").math).toEqual([
      { tex: "\\boxed{\\frac{1}{3}}", display: false, bare: true },
    ]);
  });

  it("stays as written where KaTeX cannot read it, never a red error", () => {
    const html = renderMarkdown("The share is \\boxed{70%}.");
    expect(html).not.toContain("katex-error");
    expect(html).toContain("\\boxed{70%}");
  });

  it("is left alone unclosed or empty, inside $ math, and in code (no $ added)", () => {
    expect(extractMath("put it in \\boxed{ here", "n").math).toEqual([]);
    expect(extractMath("use \\boxed{} for it", "n").math).toEqual([]);
    expect(extractMath("$x = \\boxed{2}$", "n").math).toEqual([{ tex: "x = \\boxed{2}", display: false }]);
    expect(renderMarkdown("write `\\boxed{9}` at the end")).toContain("<code>\\boxed{9}</code>");
  });
});

describe("an Asymptote figure (MATH's [asy] ... [/asy])", () => {
  const problem =
    "Rope $HC$ has length 150 m. [asy]\nsize(250);\nW=(5/3)*(A+D);\nX=(5/3)*(A+B);\nlabel(\"$A$\", A, NE);\n[/asy]\n\nFind $HP$.";
  it("shows its source as written in a figure block, not as a paragraph of Markdown", () => {
    const html = renderMarkdown(problem);
    // Markdown read `*(A+D);\nX=(5/3)*` as emphasis: the products lost their `*` and went italic
    expect(html).not.toContain("<em>");
    expect(html).toContain("W=(5/3)*(A+D);\nX=(5/3)*(A+B);");
    // its labels are the source's, not typeset
    expect(html).toContain("label(&quot;$A$&quot;, A, NE);");
    expect(html).toMatch(/<details class="sl-asy"><summary>Figure \(Asymptote source, not drawn\) · 4 lines<\/summary><pre><code>size\(250\);/);
    // the text around it is Markdown and math as before, the figure outside its paragraph
    expect(html).toMatch(/^<p>Rope <span class="katex">/);
    expect(html).toMatch(/<\/p>\n?<details/);
    expect(html).toMatch(/<\/details><p>Find <span class="katex">/);
  });
  it("escapes its source and keeps each figure apart", () => {
    const html = renderMarkdown("[asy]draw(<b>x</b>);[/asy] and [asy]dot((0,0));[/asy]");
    expect(html).not.toContain("<b>");
    expect(html.match(/<details class="sl-asy">/g)).toHaveLength(2);
    expect(html).toContain("· 1 line<");
    expect(html).toContain("<p>and</p>");
  });
  it("is one word in a line of text (inline), and an unclosed [asy] stays text", () => {
    expect(renderMarkdown("Find $x$. [asy]dot((0,0));[/asy]", { inline: true })).toMatch(/Find <span class="katex">.*\(figure\)/s);
    expect(renderMarkdown("[asy] dot((0,0)); with no end")).toBe("<p>[asy] dot((0,0)); with no end</p>\n");
  });
});
