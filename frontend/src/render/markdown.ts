/**
 * Safe rendering of untrusted problem / step / guideline text: Markdown with raw HTML disabled,
 * and LaTeX math ($...$, $$...$$, \(...\), \[...\], bare \begin{align*}-style environments)
 * typeset by KaTeX with trust off.
 *
 * Math is cut out of the text before Markdown runs (so `_` and `*` inside formulas are not read as
 * emphasis) and replaced by placeholders carrying a random nonce; KaTeX's output goes back in
 * after Markdown has escaped everything else.
 */
import katex from "katex";
import MarkdownIt from "markdown-it";

const md = new MarkdownIt({ html: false, linkify: false, typographer: false, breaks: false });

// Links in untrusted text open away from the workspace and never carry the referrer.
const defaultLinkOpen =
  md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  tokens[idx].attrSet("target", "_blank");
  tokens[idx].attrSet("rel", "noopener noreferrer nofollow");
  return defaultLinkOpen(tokens, idx, options, env, self);
};

// A `*` between digits or brackets is a product, never emphasis: GSM8K solutions (Math-Shepherd's
// lines) write "30*5=<<30*5=150>>150", which Markdown showed as "305=<<305=150>>150", half in italics.
const PRODUCT_BEFORE = /[\d)]/;
const PRODUCT_AFTER = /[\d(]/;
md.inline.ruler.before("emphasis", "product_star", (state, silent) => {
  const pos = state.pos;
  if (state.src.charCodeAt(pos) !== 0x2a /* * */) return false;
  if (!PRODUCT_BEFORE.test(state.src[pos - 1] ?? "") || !PRODUCT_AFTER.test(state.src[pos + 1] ?? "")) return false;
  if (!silent) state.pending += "*";
  state.pos = pos + 1;
  return true;
});

export interface MathSegment {
  tex: string;
  display: boolean;
  /** Found with no delimiters around it (a bare `\boxed{…}`): typeset if KaTeX reads it, else
   * shown as written, never as a red error. */
  bare?: boolean;
}

export interface Extracted {
  text: string;
  math: MathSegment[];
}

function placeholder(nonce: string, i: number): string {
  return `MATH${nonce}X${i}X`;
}

/** LaTeX display environments KaTeX typesets on their own, also outside `$$`. */
const DISPLAY_ENV = /^\\begin\{((?:align|alignat|equation|gather)\*?)\}/;

/** The end of the group opened by the `{` at `open` (its index), or -1 when it is not closed. */
function closingBrace(src: string, open: number): number {
  let depth = 0;
  for (let j = open; j < src.length; j++) {
    const c = src[j];
    if (c === "\\") j += 1;
    else if (c === "{") depth += 1;
    else if (c === "}" && --depth === 0) return j;
  }
  return -1;
}

/**
 * Replace math by placeholders. `\$` stays a literal dollar. A single `$` opens inline math only
 * when followed by a non-space and closes at a `$` preceded by a non-space and not followed by a
 * digit (pandoc's rule), so "costs $5 and $6" stays text.
 */
export function extractMath(src: string, nonce: string): Extracted {
  const math: MathSegment[] = [];
  let out = "";
  let i = 0;
  const push = (tex: string, display: boolean, bare = false): void => {
    out += placeholder(nonce, math.length);
    math.push(bare ? { tex, display, bare } : { tex, display });
  };
  while (i < src.length) {
    const ch = src[i];
    if (ch === "\\" && i + 1 < src.length) {
      const nx = src[i + 1];
      const env = DISPLAY_ENV.exec(src.slice(i, i + 24));
      if (env) {
        // PRM800K steps write \begin{align*}...\end{align*} without $$: typeset it as display math.
        const close = `\\end{${env[1]}}`;
        const end = src.indexOf(close, i + env[0].length);
        if (end !== -1) {
          push(src.slice(i, end + close.length), true);
          i = end + close.length;
          continue;
        }
      }
      // Models end a solution with "the answer is \boxed{9}" without `$`: the final answer shown
      // typeset, as PRM800K's `$\boxed{9}$` is (the importer reads the answer from it too).
      if (src.startsWith("\\boxed{", i)) {
        const end = closingBrace(src, i + 6);
        if (end > i + 7) {
          push(src.slice(i, end + 1), false, true);
          i = end + 1;
          continue;
        }
      }
      if (nx === "(" || nx === "[") {
        const close = nx === "(" ? "\\)" : "\\]";
        const end = src.indexOf(close, i + 2);
        if (end !== -1) {
          push(src.slice(i + 2, end), nx === "[");
          i = end + 2;
          continue;
        }
      }
      out += ch + nx; // any other escape (\$ included) is Markdown's business
      i += 2;
      continue;
    }
    if (ch === "$") {
      if (src[i + 1] === "$") {
        const end = src.indexOf("$$", i + 2);
        if (end !== -1 && end > i + 2) {
          push(src.slice(i + 2, end), true);
          i = end + 2;
          continue;
        }
      } else if (i + 1 < src.length && !/\s/.test(src[i + 1])) {
        const end = findInlineClose(src, i + 1);
        if (end !== -1) {
          push(src.slice(i + 1, end), false);
          i = end + 1;
          continue;
        }
      }
    }
    out += ch;
    i += 1;
  }
  return { text: out, math };
}

function findInlineClose(src: string, from: number): number {
  for (let j = from; j < src.length; j++) {
    const c = src[j];
    if (c === "\\") {
      j += 1;
      continue;
    }
    if (c === "\n" && src[j + 1] === "\n") return -1; // math never spans paragraphs
    if (c === "$") {
      if (/\s/.test(src[j - 1]) || /\d/.test(src[j + 1] ?? "")) continue;
      return j;
    }
  }
  return -1;
}

const katexCache = new Map<string, string>();

export function renderTex(tex: string, display: boolean): string {
  const key = (display ? "D" : "I") + tex;
  let html = katexCache.get(key);
  if (html === undefined) {
    html = katex.renderToString(tex, {
      displayMode: display,
      throwOnError: false,
      trust: false,
      strict: "ignore",
      maxSize: 20,
      maxExpand: 500,
      output: "htmlAndMathml",
    });
    if (katexCache.size > 2000) katexCache.clear();
    katexCache.set(key, html);
  }
  return html;
}

/** Bare TeX (no delimiters: a guess that it is math) typeset, or, where KaTeX cannot read it
 * (`\boxed{70%}`: a comment to KaTeX), the text as written. */
function renderBare(tex: string): string {
  try {
    return katex.renderToString(tex, {
      displayMode: false,
      throwOnError: true,
      trust: false,
      strict: "ignore",
      maxSize: 20,
      maxExpand: 500,
      output: "htmlAndMathml",
    });
  } catch {
    return md.utils.escapeHtml(tex);
  }
}

function randomNonce(): string {
  const bytes = new Uint8Array(6);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

interface MathEnv {
  math: MathSegment[];
  re: RegExp;
  /** What a `#` heading becomes (3: h3, ## an h4, …, capped at h6), so rendered text sits under
   * the page's own heading for it; default: as written. */
  headingLevel?: number;
}

// Headings demoted to the level the page gives the text (its "Guidelines" h2 above an h1 broke
// the page's heading order). Markdown-it's tokens are made per render: setting the tag is safe.
for (const rule of ["heading_open", "heading_close"] as const) {
  md.renderer.rules[rule] = (tokens, idx, options, e, self) => {
    const base = (e as Partial<MathEnv> | undefined)?.headingLevel;
    const tok = tokens[idx];
    if (base && base > 1) tok.tag = `h${Math.min(6, Number(tok.tag.slice(1)) + base - 1)}`;
    return self.renderToken(tokens, idx, options);
  };
}

// Formulas are typeset only in text content. Anywhere else a placeholder can land (an image's alt
// text, a link's URL or title, code) it becomes the formula's source again, escaped: KaTeX's markup
// inside an attribute would corrupt the element.
md.renderer.rules.text = (tokens, idx, _options, e) => {
  const html = md.utils.escapeHtml(tokens[idx].content);
  const env = e as Partial<MathEnv> | undefined;
  if (!env?.math?.length || !env.re) return html;
  return html.replace(env.re, (whole, n: string) => {
    const seg = env.math?.[Number(n)];
    if (!seg) return whole;
    return seg.bare ? renderBare(seg.tex) : renderTex(seg.tex, seg.display);
  });
};

/** MATH draws a problem's figure with Asymptote source between `[asy]` and `[/asy]` (86 of MATH-500's
 * 500 problems). Read as Markdown it ran into the text as one paragraph, its `*` products taken for
 * emphasis (`W=(5/3)*(A+D); X=(5/3)*(A+B)` lost both `*` and went italic) and its `$A$` labels
 * typeset: it is shown as written instead, in a block of its own, closed until opened. */
const ASY = /\[asy\]([\s\S]*?)\[\/asy\]/g;

function renderAsy(source: string): string {
  const code = source.replace(/^\s*\n|\s+$/g, "");
  const lines = code.split("\n").length;
  return (
    `<details class="sl-asy"><summary>Figure (Asymptote source, not drawn) · ${lines} line${lines === 1 ? "" : "s"}</summary>` +
    `<pre><code>${md.utils.escapeHtml(code)}</code></pre></details>`
  );
}

/** Markdown + math to HTML that is safe to assign to innerHTML; an Asymptote figure's source as
 * written, in a block of its own (inline: the word "(figure)"). */
export function renderMarkdown(src: string, opts: { inline?: boolean; headingLevel?: number } = {}): string {
  if (!src.includes("[asy]")) return renderText(src, opts);
  let html = "";
  let last = 0;
  for (const m of src.matchAll(ASY)) {
    const before = src.slice(last, m.index);
    html += opts.inline
      ? renderText(before, opts) + '<span class="sl-muted">(figure)</span>'
      : (before.trim() ? renderText(before, opts) : "") + renderAsy(m[1]);
    last = m.index + m[0].length;
  }
  const rest = src.slice(last);
  return html + (rest.trim() || last === 0 ? renderText(rest, opts) : "");
}

function renderText(src: string, opts: { inline?: boolean; headingLevel?: number }): string {
  const nonce = randomNonce();
  const { text, math } = extractMath(src, nonce);
  const env: MathEnv = { math, re: new RegExp(`MATH${nonce}X(\\d+)X`, "g"), headingLevel: opts.headingLevel };
  const html = opts.inline ? md.renderInline(text, { ...env }) : md.render(text, { ...env });
  if (math.length === 0) return html;
  return html.replace(env.re, (whole, n: string) => {
    const seg = math[Number(n)];
    if (!seg) return whole;
    const delim = seg.bare ? "" : seg.display ? "$$" : "$";
    return md.utils.escapeHtml(delim + seg.tex + delim);
  });
}

// A final answer as PRM800K stores it: bare LaTeX ("\\frac{1}{6}", "25\\pi") with no `$` around it, so
// Markdown alone would show its source. Text with its own delimiters stays Markdown; plain words too.
const BARE_TEX = /[\\^_{}]/;
// A `$` that opens math. MATH writes a price as `\$32,\!348`: its escaped dollar is no delimiter
// (read as Markdown, `\!` lost its backslash and the answer showed as "$32,!348").
const MATH_DOLLAR = /(^|[^\\])\$/;

/** A final or ground-truth answer, inline: bare LaTeX is typeset, anything else is inline Markdown. */
export function renderAnswer(src: string): string {
  const text = src.trim();
  if (!MATH_DOLLAR.test(text) && !text.includes("\\(") && BARE_TEX.test(text)) return renderTex(text, false);
  return renderMarkdown(text, { inline: true });
}

// PRM800K ends a solution with a step "# Answer\n\n<answer>": a convention, not a heading.
const ANSWER_LINE = /^[ \t]*#[ \t]*Answer[ \t]*$/im;

/**
 * A solution step (or alternative): Markdown + math, with PRM800K's `# Answer` line shown as an
 * answer line ("Answer: 10") instead of a page-sized heading.
 */
export function renderStep(src: string): string {
  const m = ANSWER_LINE.exec(src);
  if (!m) return renderMarkdown(src);
  const before = src.slice(0, m.index).trim();
  const answer = src.slice(m.index + m[0].length).trim();
  const line =
    '<p class="sl-answer"><span class="sl-answer-label">Answer:</span> ' +
    (answer ? renderAnswer(answer) : '<span class="sl-answer-missing">(none given)</span>') +
    "</p>";
  return (before ? renderMarkdown(before) : "") + line;
}
