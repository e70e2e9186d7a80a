/** The workspace's dialogs (give up / bad problem reason, confirming a skip, keyboard shortcuts) and its key hints. */
import type { GiveUpReason } from "../labeling/state";
import { h } from "../shared/dom";
import { type KeyBinding, savesTextBox } from "./keymap";

/** Asks for the reason of a give up or a bad-problem report; Enter confirms, Esc cancels. */
export class ReasonDialog {
  readonly el: HTMLDialogElement;
  private readonly title = h("h2", { id: "sl-reason-title" });
  private readonly input: HTMLTextAreaElement;
  private kind: GiveUpReason = "give_up";
  /** What was typed per kind and not confirmed: Esc (or Cancel) kept the dialog's text only until
   * it opened again, empty. Forgotten when the task changes (`reset`). */
  private typed: Partial<Record<GiveUpReason, string>> = {};

  constructor(private readonly onConfirm: (kind: GiveUpReason, note: string) => void) {
    this.input = h("textarea", {
      id: "sl-reason",
      rows: 3,
      required: true,
      maxlength: 2000,
      "aria-describedby": "sl-reason-hint", // read with the box: how to confirm or cancel
    });
    const form = h(
      "form",
      { method: "dialog", class: "sl-dialog-body" },
      this.title,
      h("label", { for: "sl-reason" }, "Reason (required)"),
      this.input,
      // sl-keys-only: not on a touch screen, where the return key adds a line and Confirm confirms
      h("p", { class: "sl-hint sl-keys-only", id: "sl-reason-hint" }, "Enter confirms, Shift+Enter adds a line, Esc cancels."),
      h(
        "div",
        { class: "sl-dialog-actions" },
        h("button", { type: "button", class: "sl-btn", onclick: () => this.el.close() }, "Cancel"),
        h("button", { type: "submit", class: "sl-btn sl-primary" }, "Confirm"),
      ),
    );
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      this.confirm();
    });
    this.input.addEventListener("input", () => (this.typed[this.kind] = this.input.value));
    this.input.addEventListener("keydown", (e) => {
      if (savesTextBox(e)) {
        e.preventDefault();
        this.confirm();
      }
    });
    this.el = h("dialog", { class: "sl-dialog", "aria-labelledby": "sl-reason-title" }, form);
  }

  get isOpen(): boolean {
    return this.el.open;
  }

  open(kind: GiveUpReason): void {
    this.kind = kind;
    this.title.textContent = kind === "give_up" ? "Give up on this solution" : "Report a bad problem";
    this.input.value = this.typed[kind] ?? "";
    this.el.showModal();
    this.input.focus();
  }

  private confirm(): void {
    const note = this.input.value.trim();
    if (note === "") {
      this.input.setAttribute("aria-invalid", "true");
      this.input.reportValidity();
      return;
    }
    this.input.removeAttribute("aria-invalid");
    delete this.typed[this.kind];
    this.el.close();
    this.onConfirm(this.kind, note);
  }

  /** A new task: reasons typed for the last one do not carry over. */
  reset(): void {
    this.typed = {};
  }
}

/**
 * Asks before work is thrown away (a skip discards the ratings given): Esc or "Keep" keeps it,
 * and focus starts on "Keep", so a stray Enter discards nothing.
 */
export class ConfirmDialog {
  readonly el: HTMLDialogElement;
  private readonly title = h("h2", { id: "sl-confirm-title" });
  private readonly text = h("p", { id: "sl-confirm-text" });
  // what throws work away is red; keeping it, the default (focused), is the primary look
  private readonly yes = h("button", { type: "submit", class: "sl-btn sl-danger", value: "yes" });
  private readonly keep = h("button", { type: "button", class: "sl-btn sl-primary", onclick: () => this.el.close("") });
  private answer: ((yes: boolean) => void) | null = null;

  constructor() {
    this.el = h(
      "dialog",
      { class: "sl-dialog", "aria-labelledby": "sl-confirm-title", "aria-describedby": "sl-confirm-text" },
      h(
        "form",
        { method: "dialog", class: "sl-dialog-body" },
        this.title,
        this.text,
        h("div", { class: "sl-dialog-actions" }, this.keep, this.yes),
      ),
    );
    this.el.addEventListener("close", () => {
      this.answer?.(this.el.returnValue === "yes");
      this.answer = null;
    });
  }

  get isOpen(): boolean {
    return this.el.open;
  }

  /** Resolves true when the annotator confirms, false when they keep their work. */
  ask(o: { title: string; text: string; yes: string; keep: string }): Promise<boolean> {
    this.title.textContent = o.title;
    this.text.textContent = o.text;
    this.yes.textContent = o.yes;
    this.keep.textContent = o.keep;
    this.el.returnValue = "";
    this.el.showModal();
    this.keep.focus({ preventScroll: true });
    return new Promise((resolve) => (this.answer = resolve));
  }
}

/** Every key of the key map with what it does. */
export class ShortcutsDialog {
  readonly el: HTMLDialogElement;
  private readonly close = h("button", { type: "button", class: "sl-btn", onclick: () => this.el.close() }, "Close");

  constructor(keymap: readonly KeyBinding[]) {
    const rows = keymap.map((b) => h("tr", {}, h("th", { scope: "row" }, h("kbd", {}, b.label)), h("td", {}, b.help)));
    this.el = h(
      "dialog",
      { class: "sl-dialog", "aria-labelledby": "sl-keys-title" },
      h(
        "div",
        { class: "sl-dialog-body" },
        h("h2", { id: "sl-keys-title" }, "Keyboard shortcuts"),
        h("table", { class: "sl-keys" }, h("tbody", {}, ...rows)),
        h("p", { class: "sl-hint" }, "Tab reaches every button too. Esc closes this list."),
        h("div", { class: "sl-dialog-actions" }, this.close),
      ),
    );
  }

  get isOpen(): boolean {
    return this.el.open;
  }

  toggle(): void {
    if (this.el.open) return this.el.close();
    this.el.showModal();
    // showModal focuses Close, the last thing in the list, and scrolls a tall list down to it:
    // the list opens at its top, Close still holding focus for Enter and Esc.
    this.close.focus({ preventScroll: true });
    this.el.scrollTop = 0;
  }
}

/** The side panel's short list: the bindings that carry a hint. */
export function keyHints(keymap: readonly KeyBinding[]): HTMLElement {
  return h(
    "p",
    { class: "sl-keyhint" },
    ...keymap
      .filter((b) => b.hint)
      .map((b) => h("span", { class: "sl-keypair" }, h("kbd", {}, b.label), ` ${b.hint}`)),
  );
}
