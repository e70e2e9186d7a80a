/**
 * Code on the page: a block of source lines with a line-number gutter, highlighted by highlight.js
 * (highlight.ts). This module is part of the chunk the workspace loads only for code and trace
 * tasks (workspace/stepbody.ts), so math tasks never fetch the highlighter.
 */
import { h } from "../shared/dom";
import { highlight } from "./highlight";

/** The number of lines a step's text takes (a trailing newline adds none). */
export function lineCount(text: string): number {
  return text.replace(/\n$/, "").split("\n").length;
}

/** 1-based first and last line of each step, counted over the steps one after another. */
export function lineRanges(texts: readonly string[]): [number, number][] {
  let next = 1;
  return texts.map((t) => {
    const n = lineCount(t);
    const range: [number, number] = [next, next + n - 1];
    next += n;
    return range;
  });
}

/** A code block with a line-number gutter, highlighted when highlight.js knows the language. */
export function codeBlock(text: string, language: string, firstLine = 1): HTMLElement {
  const body = text.replace(/\n$/, "");
  const numbers = Array.from({ length: lineCount(body) }, (_, k) => String(firstLine + k)).join("\n");
  const code = h("code", { class: `hljs language-${language}` }, body);
  const html = highlight(body, language);
  if (html !== null) code.innerHTML = html; // highlight.js escapes the source text
  return h(
    "div",
    { class: "sl-code", "data-language": language, "data-highlighted": html !== null ? "true" : "false" },
    h("pre", { class: "sl-gutter", "aria-hidden": "true" }, numbers),
    h("pre", { class: "sl-code-body" }, code),
  );
}
