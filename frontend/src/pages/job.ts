/** The status box under an import or export form: progress bar, message, line-numbered errors.
 * The message and the errors are one live region: a status while the job runs, an alert once it
 * has failed, so a failure is announced at once. The bar is named by the message. */
import { h } from "../shared/dom";

let boxes = 0;

export class JobBox {
  private readonly bar: HTMLProgressElement;
  private readonly message: HTMLElement;
  private readonly errors: HTMLElement;
  private readonly live: HTMLElement;

  constructor(private readonly box: HTMLElement) {
    this.bar = box.querySelector("[data-progress]") as HTMLProgressElement;
    this.message = box.querySelector("[data-message]") as HTMLElement;
    this.errors = box.querySelector("[data-errors]") as HTMLElement;
    // a box from an older template: the message itself is the live region
    this.live = box.querySelector<HTMLElement>("[data-live]") ?? this.message;
    nameBar(this.bar, this.message);
  }

  /** The live region says "status" while a job goes on or has ended well, "alert" when it failed. */
  private announce(role: "status" | "alert"): void {
    if (this.live.getAttribute("role") !== role) this.live.setAttribute("role", role);
  }

  /** fraction in [0, 1], or null for "working, amount unknown". */
  progress(text: string, fraction: number | null): void {
    this.box.hidden = false;
    this.box.dataset.state = "running";
    this.announce("status");
    this.bar.hidden = false;
    if (fraction === null) this.bar.removeAttribute("value");
    else this.bar.value = Math.round(Math.min(1, Math.max(0, fraction)) * 100);
    this.bar.max = 100;
    this.message.textContent = text;
    this.message.className = "";
    this.errors.hidden = true;
  }

  done(text: string, link?: { href: string; text: string }): void {
    this.box.hidden = false;
    this.box.dataset.state = "succeeded";
    this.announce("status");
    this.bar.value = 100;
    this.bar.max = 100;
    this.message.className = "sl-ok";
    this.message.textContent = text;
    if (link) this.message.append(" ", h("a", { href: link.href }, link.text));
  }

  /** Ended early on request: the bar stays where it got to, the message is neither ok nor an error. */
  stopped(text: string, fraction: number): void {
    this.progress(text, fraction);
    this.box.dataset.state = "stopped";
  }

  failed(text: string, lines: string[] = []): void {
    this.box.hidden = false;
    this.box.dataset.state = "failed";
    this.announce("alert");
    this.bar.hidden = true;
    this.message.className = "sl-error";
    this.message.textContent = text;
    this.errors.replaceChildren(...lines.map((line) => h("li", {}, line)));
    this.errors.hidden = lines.length === 0;
  }
}

/** Give a progress bar an accessible name: the message beside it, which says what is going on. */
export function nameBar(bar: HTMLProgressElement, message: HTMLElement): void {
  if (bar.hasAttribute("aria-label") || bar.hasAttribute("aria-labelledby")) return;
  if (!message.id) message.id = `sl-job-message-${++boxes}`;
  bar.setAttribute("aria-labelledby", message.id);
}

/** Re-read this page and swap in its fresh copy of `selector` (e.g. the past-jobs table). */
export async function refreshSection(selector: string): Promise<void> {
  const current = document.querySelector(selector);
  if (!current) return;
  const response = await fetch(window.location.href, { credentials: "same-origin" });
  if (!response.ok) return;
  const fresh = new DOMParser().parseFromString(await response.text(), "text/html").querySelector(selector);
  if (fresh) current.replaceWith(document.importNode(fresh, true));
}
