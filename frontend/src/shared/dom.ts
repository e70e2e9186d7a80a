/** A tiny element builder: no framework, no innerHTML except for renderer output. */
type Attrs = Record<string, string | number | boolean | null | undefined | ((e: Event) => void)>;
type Child = Node | string | null | undefined | false;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (typeof v === "function") el.addEventListener(k.replace(/^on/, ""), v);
    else if (k === "class") el.className = String(v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c);
  }
  return el;
}

/** Put trusted renderer output (see render/markdown.ts) into an element. */
export function setRendered(el: HTMLElement, html: string): HTMLElement {
  el.innerHTML = html;
  return el;
}

export function setPressed(el: HTMLElement, pressed: boolean): void {
  el.setAttribute("aria-pressed", pressed ? "true" : "false");
}
