/**
 * Live preview of the guidelines with the workspace's renderer (Markdown, KaTeX, no raw HTML). Not
 * a live region: a screen reader re-read all the guidelines on every pause in typing. Its headings
 * sit under the preview's own h2 (# is an h3), as in the workspace's side panel.
 */
import "katex/dist/katex.min.css";

import { renderMarkdown } from "../render/markdown";

export function startPreview(source: HTMLTextAreaElement, preview: HTMLElement): void {
  let timer = 0;
  const draw = (): void => {
    const text = source.value.trim();
    preview.innerHTML = text ? renderMarkdown(source.value, { headingLevel: 3 }) : '<p class="sl-muted">Nothing to preview yet.</p>';
  };
  source.addEventListener("input", () => {
    window.clearTimeout(timer);
    timer = window.setTimeout(draw, 120);
  });
  draw();
}
