/** Live preview of the guidelines with the workspace's renderer (Markdown, KaTeX, no raw HTML). */
import "katex/dist/katex.min.css";

import { renderMarkdown } from "../render/markdown";

export function startPreview(source: HTMLTextAreaElement, preview: HTMLElement): void {
  let timer = 0;
  const draw = (): void => {
    const text = source.value.trim();
    preview.innerHTML = text ? renderMarkdown(source.value) : '<p class="sl-muted">Nothing to preview yet.</p>';
  };
  source.addEventListener("input", () => {
    window.clearTimeout(timer);
    timer = window.setTimeout(draw, 120);
  });
  draw();
}
