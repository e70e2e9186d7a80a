/**
 * One solution step on the page: its text, rating and flag buttons, alternatives and the two
 * writers (alternative, corrected / own step). Built once per task; `render` updates it in place
 * from the labeling state.
 */
import {
  addAlternative,
  blurWriter,
  currentIndex,
  focusWriter,
  type LabelingState,
  MAX_CRITIQUE,
  nextStep,
  openCritique,
  type Rating,
  rate,
  setCritique,
  setHumanStep,
  type Target,
  type TaskStep,
  toggleFlagAt,
} from "../labeling/state";
import { renderMarkdown, renderStep } from "../render/markdown";
import { h, setPressed, setRendered } from "../shared/dom";
import { nextStepWhy } from "./guidance";
import { keyFor, RATE_ACTIONS, savesTextBox } from "./keymap";

/** A step's body and type badge as a task kind draws them (stepbody.ts for code and traces). */
export interface StepParts {
  body: HTMLElement;
  badge: HTMLElement | null;
  /** How text the annotator writes (a corrected step, an alternative) is drawn, as the steps are:
   * code as code, its lines and indentation kept. Absent: Markdown with math. */
  written?: (text: string) => HTMLElement;
}

/** Applies a transition to the workspace's state (re-rendering, saving); returns the new state. */
export type Act = (fn: (s: LabelingState) => LabelingState, save?: boolean, scroll?: boolean) => LabelingState | null;

const RATING_BUTTONS: { rating: Rating; name: string; symbol: string; cls: string }[] = [
  { rating: -1, name: "Negative", symbol: "−", cls: "neg" },
  { rating: 0, name: "Neutral", symbol: "○", cls: "neu" },
  { rating: 1, name: "Positive", symbol: "+", cls: "pos" },
];

/** What every step's render needs to know about the whole state. */
export interface RenderContext {
  cur: number | null;
  visible: number;
  err: number | null;
  canWrite: boolean;
  flagTarget: Target | null;
  /** The step the critique key acts on (the one rated last), or null. */
  critiqueTarget: number | null;
  critiqueRequired: boolean;
  /** Whether the single-key shortcuts are on: off, no button names a key or has `aria-keyshortcuts`. */
  keys: boolean;
}

/** A button's key, named in `aria-keyshortcuts` (null: none, the key does not act there or at all). */
function markKey(button: HTMLElement, key: string | null): void {
  if (key === null) button.removeAttribute("aria-keyshortcuts");
  else button.setAttribute("aria-keyshortcuts", key);
}

/** A button's label with its key in brackets while the single-key shortcuts act: "Critique (e)". */
function withKey(label: string, key: string | null): string {
  return key === null ? label : `${label} (${key})`;
}

function rateButton(b: (typeof RATING_BUTTONS)[number], onclick: () => void): HTMLButtonElement {
  const key = keyFor(RATE_ACTIONS[b.rating]);
  return h(
    "button",
    { type: "button", class: `sl-rate sl-${b.cls}`, "aria-pressed": "false", "aria-keyshortcuts": key, onclick },
    h("span", { class: "sl-sym", "aria-hidden": "true" }, b.symbol),
    b.name,
    h("kbd", { "aria-hidden": "true" }, key),
  );
}

/** A Flag button; its key badge shows only where `f` acts (see markFlagKey). */
function flagButton(onclick: () => void): HTMLButtonElement {
  return h(
    "button",
    { type: "button", class: "sl-flag", "aria-pressed": "false", onclick },
    h("span", { class: "sl-sym", "aria-hidden": "true" }, "⚑"),
    "Flag",
    h("kbd", { "aria-hidden": "true", hidden: true }, keyFor("flag")),
  );
}

function markFlagKey(button: HTMLButtonElement, isTarget: boolean, keys: boolean): void {
  const kbd = button.querySelector("kbd");
  if (kbd) kbd.hidden = !isTarget;
  markKey(button, isTarget && keys ? keyFor("flag") : null);
}

/** The rating buttons of a step or an alternative: their keys named while the shortcuts act. */
function markRateKeys(buttons: Iterable<HTMLButtonElement>, keys: boolean): void {
  let k = 0;
  for (const b of buttons) markKey(b, keys ? keyFor(RATE_ACTIONS[RATING_BUTTONS[k++].rating]) : null);
}

function ratingName(r: Rating): string {
  return r === 1 ? "Positive" : r === 0 ? "Neutral" : "Negative";
}

/** A text box with its save button. `keys`: how the keys save or leave it, not shown on a touch
 * screen (sl-keys-only), where the return key starts a new line; `note`: what holds for any input. */
function writerForm(
  id: string,
  label: HTMLElement,
  input: HTMLTextAreaElement,
  button: string,
  keys: string,
  commit: () => void,
  note = "",
): HTMLFormElement {
  const form = h(
    "form",
    { class: "sl-writer" },
    label,
    input,
    h(
      "div",
      { class: "sl-writer-actions" },
      h("button", { type: "submit", class: "sl-btn sl-small" }, button),
      h("span", { class: "sl-hint sl-keys-only" }, keys),
      ...(note ? [h("span", { class: "sl-hint" }, note)] : []),
    ),
  );
  label.setAttribute("for", id);
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    commit();
  });
  return form;
}

export class StepView {
  readonly li: HTMLLIElement;
  private readonly rateButtons: HTMLButtonElement[];
  private readonly flag: HTMLButtonElement;
  private readonly status = h("span", { class: "sl-step-status" });
  private readonly altList = h("ul", { class: "sl-alt-list" });
  private readonly alts: HTMLElement;
  private altSig = "";
  private readonly writers: HTMLElement;
  private readonly writeHuman: HTMLButtonElement;
  private readonly writeAlt: HTMLButtonElement;
  /** Phase 1: move on from this step once something here is Positive (what `n` does). */
  private readonly next: HTMLButtonElement;
  private readonly newAltHint: HTMLElement;
  private readonly humanShown = h("div", { class: "sl-human-shown" });
  private readonly humanForm: HTMLFormElement;
  private readonly humanInput: HTMLTextAreaElement;
  private readonly humanLabel = h("label", {}, "Corrected step");
  private readonly newAltForm: HTMLFormElement;
  private readonly newAltInput: HTMLTextAreaElement;
  private readonly rateGroup: HTMLElement;
  private readonly critiqueShown = h("div", { class: "sl-critique-shown" });
  private readonly critiqueForm: HTMLFormElement;
  private readonly critiqueInput: HTMLTextAreaElement;
  /** Says the box is the step's own when `e` opened it just after an alternative was rated. */
  private readonly critiqueFor: HTMLElement;
  private readonly critiqueOpen: HTMLButtonElement;
  /** The box holds text not saved yet: Esc leaves it there, and reopening the box shows it again
   * (it was reset to the saved critique, silently dropping what was written). */
  private critiqueUnsaved = false;
  private readonly rated: boolean;
  /** The single-key shortcuts' switch as last drawn (alternatives built later name keys by it). */
  private keys = true;
  private readonly written: ((text: string) => HTMLElement) | null;

  constructor(
    private readonly i: number,
    step: TaskStep,
    private readonly act: Act,
    parts?: StepParts,
    /** The Next step button's press: the workspace's `n` (it says why when it cannot move on). */
    onNext?: () => void,
  ) {
    const n = i + 1;
    this.written = parts?.written ?? null;
    this.rated = step.rated !== false;
    this.rateButtons = RATING_BUTTONS.map((b) =>
      rateButton(b, () => act((s) => rate({ ...s, focus: { kind: "main" } }, b.rating))),
    );
    // The page stays where the Flag was pressed (it may be on a step rated long ago).
    this.flag = flagButton(() => act((s) => toggleFlagAt(s, { step: i, alt: null }), true, false));
    this.alts = h("div", { class: "sl-alts" }, h("h3", {}, `Alternatives at step ${n}`), this.altList);

    this.humanInput = h("textarea", { id: `sl-human-${i}`, rows: 2, maxlength: 5000 });
    this.humanForm = writerForm(
      `sl-human-${i}`,
      this.humanLabel,
      this.humanInput,
      "Save step",
      "Enter saves · Shift+Enter new line · Esc leaves",
      () => this.commitHuman(),
    );
    this.newAltInput = h("textarea", { id: `sl-newalt-${i}`, rows: 2, maxlength: 5000 });
    this.newAltForm = writerForm(
      `sl-newalt-${i}`,
      h("label", {}, "New alternative step"),
      this.newAltInput,
      "Add alternative",
      "Enter adds it, then rate it with 1/2/3",
      () => this.commitNewAlt(),
    );
    this.critiqueFor = h(
      "p",
      { class: "sl-hint sl-critique-for", id: `sl-critique-for-${i}`, hidden: true },
      `Alternatives take no critique: this is the critique of step ${n} itself.`,
    );
    this.critiqueInput = h("textarea", {
      id: `sl-critique-${i}`,
      rows: 3,
      maxlength: MAX_CRITIQUE,
      "aria-describedby": `sl-critique-for-${i}`,
    });
    this.critiqueForm = writerForm(
      `sl-critique-${i}`,
      h("label", {}, `Critique of step ${n}: what is wrong (or right) with it, in your words`),
      this.critiqueInput,
      "Save critique",
      "Enter saves · Shift+Enter new line · Esc leaves",
      () => this.commitCritique(),
      "Empty removes it",
    );
    this.newAltHint = this.newAltForm.querySelector<HTMLElement>(".sl-hint")!;
    this.critiqueForm.insertBefore(this.critiqueFor, this.critiqueInput);
    this.critiqueInput.addEventListener("input", () => (this.critiqueUnsaved = true));
    const critiqueKey = keyFor("write-critique");
    this.critiqueOpen = h(
      "button",
      {
        type: "button",
        class: "sl-btn sl-small sl-critique-open",
        onclick: () => act((s) => (s.labels[i].rating === null ? s : openCritique({ ...s, last: { step: i, alt: null } })), false),
      },
      `Critique (${critiqueKey})`,
    );
    for (const [input, commit] of [
      [this.humanInput, () => this.commitHuman()],
      [this.newAltInput, () => this.commitNewAlt()],
      [this.critiqueInput, () => this.commitCritique()],
    ] as const) {
      input.addEventListener("keydown", (e) => {
        if (savesTextBox(e)) {
          e.preventDefault();
          commit();
        } else if (e.key === "Escape") {
          e.preventDefault();
          act(blurWriter, false);
        }
      });
    }
    const altKey = keyFor("write-alternative");
    const humanKey = keyFor("write-human");
    this.writeHuman = h(
      "button",
      {
        type: "button",
        class: "sl-btn sl-small sl-write-human",
        "aria-keyshortcuts": humanKey,
        onclick: () => act((s) => focusWriter(s, "human"), false),
      },
      `Write corrected step (${humanKey})`,
    );
    this.writeAlt = h(
      "button",
      {
        type: "button",
        class: "sl-btn sl-small",
        "aria-keyshortcuts": altKey,
        onclick: () => act((s) => focusWriter(s, "newalt"), false),
      },
      `Write alternative (${altKey})`,
    );
    // Where n acts, and for whoever does not use it: a mouse, a phone, the single-key shortcuts off.
    this.next = h(
      "button",
      { type: "button", class: "sl-btn sl-small sl-next-step", hidden: true, onclick: () => onNext?.() },
      "Next step",
    );
    this.writers = h(
      "div",
      { class: "sl-writers" },
      h(
        "div",
        { class: "sl-writer-open" },
        this.writeAlt,
        this.writeHuman,
        this.next,
      ),
      this.newAltForm,
      this.humanForm,
    );
    this.rateGroup = h(
      "div",
      { class: "sl-rate-group", role: "group", "aria-label": `Rate step ${n}` },
      ...this.rateButtons,
      this.flag,
    );
    this.rateGroup.hidden = !this.rated;
    const body = parts?.body ?? setRendered(h("div", { class: "sl-md sl-step-text" }), renderStep(step.text));
    body.id = `sl-step-body-${i}`;
    this.status.id = `sl-step-status-${i}`;
    this.li = h(
      "li",
      // focus lands here as the steps advance: a screen reader reads the step's text and where its
      // rating stands, not just "Step 2" (the status says the rating just given, or "rate this step")
      {
        class: "sl-step",
        tabindex: -1,
        "aria-label": `Step ${n}`,
        "aria-describedby": `sl-step-status-${i} sl-step-body-${i}`,
      },
      h("div", { class: "sl-step-head" }, h("span", { class: "sl-step-n" }, `Step ${n}`), parts?.badge, this.status),
      body,
      this.rateGroup,
      this.critiqueOpen,
      this.critiqueShown,
      this.critiqueForm,
      this.humanShown,
      this.alts,
      this.writers,
    );
  }

  private commitCritique(): void {
    const i = this.i;
    this.critiqueUnsaved = false;
    this.act((s) => setCritique(s, i, this.critiqueInput.value));
  }

  private commitHuman(): void {
    const i = this.i;
    this.commitText(this.humanInput, (s, text) => (currentIndex(s) === i ? setHumanStep(s, text) : s));
  }

  private commitNewAlt(): void {
    const i = this.i;
    if (this.newAltInput.value.trim() === "") return;
    this.commitText(this.newAltInput, (s, text) => (currentIndex(s) === i ? addAlternative(s, text) : s));
  }

  /** Save a writer box's text into the labels. The box is emptied first: the redraw and the draft
   * the change makes read it, and text still there showed "(not saved)" on the button just saved. */
  private commitText(input: HTMLTextAreaElement, save: (s: LabelingState, text: string) => LabelingState): void {
    const text = input.value;
    input.value = "";
    let saved = false;
    this.act((s) => {
      const next = save(s, text);
      saved = next !== s;
      return next;
    });
    if (!saved) input.value = text; // not this step's turn (or a submit in flight): the text stays
  }

  private buildAlt(j: number, text: string, offered: boolean): HTMLLIElement {
    const i = this.i;
    const buttons = RATING_BUTTONS.map((b) =>
      rateButton(b, () =>
        this.act((s) => (currentIndex(s) === i ? rate({ ...s, focus: { kind: "alt", alt: j } }, b.rating) : s)),
      ),
    );
    const flag = flagButton(() => this.act((s) => toggleFlagAt(s, { step: i, alt: j }), true, false));
    markRateKeys(buttons, this.keys);
    return h(
      "li",
      { class: "sl-alt", tabindex: -1, "aria-label": `Alternative ${j + 1}${offered ? "" : " (yours)"}` },
      this.written ? h("div", { class: "sl-alt-text" }, this.written(text)) : setRendered(h("div", { class: "sl-md sl-alt-text" }), renderStep(text)),
      h("div", { class: "sl-rate-group", role: "group", "aria-label": `Rate alternative ${j + 1}` }, ...buttons, flag),
    );
  }

  render(s: LabelingState, c: RenderContext): void {
    const i = this.i;
    const l = s.labels[i];
    const isCur = i === c.cur;
    this.li.hidden = i >= c.visible;
    this.li.classList.toggle("sl-current", isCur);
    this.li.classList.toggle("sl-error", i === c.err);
    this.li.classList.toggle("sl-flagged", l.flagged);
    if (isCur) this.li.setAttribute("aria-current", "step");
    else this.li.removeAttribute("aria-current");
    this.keys = c.keys;
    const mainActive = isCur && l.rating === null;
    markRateKeys(this.rateButtons, c.keys);
    this.rateButtons.forEach((b, k) => {
      setPressed(b, l.rating === RATING_BUTTONS[k].rating);
      b.disabled = !mainActive;
    });
    setPressed(this.flag, l.flagged);
    this.flag.disabled = i >= c.visible;
    markFlagKey(this.flag, c.flagTarget?.step === i && c.flagTarget.alt === null, c.keys);
    this.li.classList.toggle("sl-focus-main", isCur && s.focus.kind === "main" && l.rating === null);
    this.status.textContent = !this.rated
      ? "shown, not rated"
      : l.rating === null
        ? isCur
          ? "rate this step"
          : ""
        : `${ratingName(l.rating)}${l.flagged ? " · flagged" : ""}`;
    this.status.dataset.rating = l.rating === null ? "" : String(l.rating);

    // Alternatives: rebuilt only when their texts change; ratings update in place.
    const sig = JSON.stringify(l.alternatives.map((a) => a.text));
    if (sig !== this.altSig) {
      this.altSig = sig;
      this.altList.replaceChildren(...l.alternatives.map((a, j) => this.buildAlt(j, a.text, a.offered)));
    }
    this.alts.hidden = l.alternatives.length === 0 || (!isCur && l.alternatives.every((a) => a.rating === null));
    Array.from(this.altList.children).forEach((item, j) => {
      const a = l.alternatives[j];
      item.classList.toggle("sl-alt-focus", isCur && s.focus.kind === "alt" && s.focus.alt === j);
      const rates = item.querySelectorAll<HTMLButtonElement>("button.sl-rate");
      rates.forEach((b, k) => {
        setPressed(b, a.rating === RATING_BUTTONS[k].rating);
        b.disabled = !(isCur && l.rating !== null);
      });
      markRateKeys(rates, c.keys);
      const fb = item.querySelector<HTMLButtonElement>("button.sl-flag");
      if (fb) {
        setPressed(fb, a.flagged);
        fb.disabled = i >= c.visible;
        markFlagKey(fb, c.flagTarget?.step === i && c.flagTarget.alt === j, c.keys);
      }
    });

    this.humanShown.hidden = l.human === null;
    this.humanShown.replaceChildren();
    if (l.human !== null) {
      this.humanShown.append(
        h("strong", {}, s.mode === "phase1" ? "Your step: " : "Corrected step: "),
        this.written ? this.written(l.human) : setRendered(h("span", { class: "sl-md" }), renderMarkdown(l.human, { inline: true })),
      );
    }
    this.writers.hidden = !(isCur && c.canWrite);
    this.humanLabel.textContent = s.mode === "phase1" ? "Your own step (none here is Positive)" : "Corrected step";
    this.humanForm.hidden = !(isCur && s.focus.kind === "human");
    this.newAltForm.hidden = !(isCur && s.focus.kind === "newalt");
    // Text left in a closed box (Esc) is not in the labels yet: its button says so, as the critique's does
    // Keys named (and in aria-keyshortcuts) only while the single-key shortcuts act.
    const humanKey = c.keys ? keyFor("write-human") : null;
    const ownStep = s.mode === "phase1" ? "your own step" : "corrected step";
    this.writeHuman.textContent = withKey(
      this.keptIn(this.humanInput, this.humanForm) ? `Finish ${ownStep} (not saved)` : `Write ${ownStep}`,
      humanKey,
    );
    markKey(this.writeHuman, humanKey);
    const altKey = c.keys ? keyFor("write-alternative") : null;
    this.writeAlt.textContent = withKey(
      this.keptIn(this.newAltInput, this.newAltForm) ? "Finish alternative (not saved)" : "Write alternative",
      altKey,
    );
    markKey(this.writeAlt, altKey);
    this.newAltHint.textContent = c.keys
      ? `Enter adds it, then rate it with ${keyFor("rate-negative")}/${keyFor("rate-neutral")}/${keyFor("rate-positive")}`
      : "Enter adds it, then rate it";
    this.renderNext(s, isCur && l.rating !== null && i < c.visible, c.keys);

    const critique = l.critique ?? null;
    const editing = s.focus.kind === "critique" && s.focus.step === i;
    if (editing && this.critiqueForm.hidden && !this.critiqueUnsaved) this.critiqueInput.value = critique ?? "";
    const unsaved = this.critiqueUnsaved && !editing;
    this.critiqueForm.hidden = !editing;
    // `e` acts on the rating given last; an alternative's is kept without a critique (a submit
    // carries one per step), so the box it opens is its step's, and says so.
    this.critiqueFor.hidden = !(editing && s.last?.step === i && s.last.alt !== null);
    // Offered where the key acts (the step rated last) and on Negative steps, or to edit one written.
    this.critiqueOpen.hidden =
      l.rating === null ||
      i >= c.visible ||
      !(c.critiqueTarget === i || l.rating === -1 || critique !== null || unsaved);
    // The key is named only where it acts, as on Flag (an outline there read as keyboard focus).
    const critiqueKey = c.critiqueTarget === i && c.keys ? keyFor("write-critique") : null;
    const name = unsaved ? "Finish critique (not saved)" : "Critique";
    this.critiqueOpen.textContent = withKey(name, critiqueKey);
    markKey(this.critiqueOpen, critiqueKey);
    const needed = c.critiqueRequired && l.rating === -1 && !critique;
    this.critiqueOpen.classList.toggle("sl-needed", needed);
    this.critiqueShown.hidden = critique === null && !needed;
    this.critiqueShown.replaceChildren(
      ...(critique !== null
        ? [
            h("strong", {}, "Critique: "),
            // rendered as the corrected step is: annotators write math in it ($(2+1)(2+1)=9$)
            setRendered(h("span", { class: "sl-md sl-critique-text" }), renderMarkdown(critique, { inline: true })),
          ]
        : [
            h(
              "em",
              {},
              `This project needs a critique of every Negative step: press ${c.keys ? keyFor("write-critique") : "its Critique button"}.`,
            ),
          ]),
    );
  }

  /** Phase 1's Next step button on the current, rated step: it does what n does, and where n
   * cannot move on yet it says so (aria-disabled, so it stays focusable and its press explains). */
  private renderNext(s: LabelingState, shown: boolean, keys: boolean): void {
    this.next.hidden = !(shown && s.mode === "phase1");
    if (this.next.hidden) return;
    const key = keys ? keyFor("next-step") : null;
    this.next.textContent = withKey("Next step", key);
    markKey(this.next, key);
    const waits = nextStep(s) === s;
    if (waits) {
      this.next.setAttribute("aria-disabled", "true");
      this.next.title = nextStepWhy(s, keys);
    } else {
      this.next.removeAttribute("aria-disabled");
      this.next.removeAttribute("title");
    }
  }

  /** A closed box still holding typed text. */
  private keptIn(input: HTMLTextAreaElement, form: HTMLFormElement): boolean {
    return form.hidden && input.value.trim() !== "";
  }

  /** Text written in this step's boxes and not saved into the labels yet, by box id: kept in the
   * draft, so a tab closed mid-sentence loses nothing (empty boxes are left out). */
  typing(): Record<string, string> {
    const typed: Record<string, string> = {};
    if (this.humanInput.value.trim()) typed[this.humanInput.id] = this.humanInput.value;
    if (this.newAltInput.value.trim()) typed[this.newAltInput.id] = this.newAltInput.value;
    if (this.critiqueUnsaved && this.critiqueInput.value.trim()) typed[this.critiqueInput.id] = this.critiqueInput.value;
    return typed;
  }

  /** Put back what `typing` kept; the ids of the boxes that got text. */
  restoreTyping(typed: Readonly<Record<string, string>>): string[] {
    const filled: string[] = [];
    for (const input of [this.humanInput, this.newAltInput, this.critiqueInput]) {
      const text = typed[input.id];
      if (typeof text !== "string" || !text.trim()) continue;
      input.value = text.slice(0, 5000);
      if (input === this.critiqueInput) this.critiqueUnsaved = true;
      filled.push(input.id);
    }
    return filled;
  }

  /** The element that holds keyboard focus for the state's focus at this (current) step. */
  focusTarget(s: LabelingState): HTMLElement {
    if (s.focus.kind === "critique") return this.critiqueInput;
    if (s.focus.kind === "human") return this.humanInput;
    if (s.focus.kind === "newalt") return this.newAltInput;
    if (s.focus.kind === "alt") return (this.altList.children[s.focus.alt] as HTMLElement | undefined) ?? this.li;
    return this.li;
  }
}
