/**
 * The annotator workspace: renders one task, maps keys and clicks onto the labeling state machine,
 * and keeps the work safe (drafts, heartbeats, acknowledged submits).
 */
import {
  addAlternative,
  blurWriter,
  buildPayload,
  canAddAlternatives,
  currentIndex,
  errorIndex,
  finishReason,
  flagTarget,
  focusWriter,
  type GiveUpReason,
  hasWork,
  IncompleteLabelingError,
  type LabelingState,
  moveFocus,
  needsHumanStep,
  nextStep,
  type Rating,
  rate,
  ratedCount,
  restore,
  setHumanStep,
  type SubmitPayload,
  toggleFlag,
  toggleFlagAt,
  toSaved,
  undo,
  visibleCount,
} from "../labeling/state";
import { renderMarkdown, renderStep } from "../render/markdown";
import { Api, newIdempotencyKey, parseTask, submitUntilAcknowledged, type Task } from "./api";
import { clearLocal, type Draft, loadLocal, pickDraft, pruneLocal, saveLocal } from "./draft";
import { h, setPressed, setRendered } from "../shared/dom";
import { ActiveTimer } from "./timer";

export interface WorkspaceConfig {
  project: { slug: string; name: string; mode: string; show_ground_truth: boolean; guidelines: string };
  api_base: string;
  csrf_token: string;
  username: string;
  /** How often the lease is extended while the page is open. */
  heartbeat_ms?: number;
}

const RATING_BUTTONS: { rating: Rating; name: string; key: string; symbol: string; cls: string }[] = [
  { rating: -1, name: "Negative", key: "1", symbol: "−", cls: "neg" },
  { rating: 0, name: "Neutral", key: "2", symbol: "○", cls: "neu" },
  { rating: 1, name: "Positive", key: "3", symbol: "+", cls: "pos" },
];

export const SHORTCUTS: [string, string][] = [
  ["1", "Rate Negative (the step or alternative in focus)"],
  ["2", "Rate Neutral"],
  ["3", "Rate Positive"],
  ["f", "Flag / unflag your last rating as unsure (its Flag button shows the f); Flag buttons flag any step"],
  ["Backspace", "Undo the last change"],
  ["↓ / j, ↑ / k", "Move between the step and its alternatives"],
  ["a", "Write an alternative step here (after a Negative; any rated step in phase 1)"],
  ["c", "Write the corrected step (phase 1: your own step)"],
  ["Enter", "In a text box: save it (Shift+Enter: new line); Esc leaves it"],
  ["n", "Phase 1: move on to the next step once something here is Positive"],
  ["Enter", "Submit when the labeling is complete"],
  ["g", "Give up (asks for a reason)"],
  ["b", "Bad problem (asks for a reason)"],
  ["Tab", "Reaches every button, Skip included (skipped solutions are not served to you again)"],
  ["?", "Show / hide this list"],
];

const HEARTBEAT_MS = 60_000;
const DRAFT_DEBOUNCE_MS = 1_500;

interface StepView {
  li: HTMLLIElement;
  rateButtons: HTMLButtonElement[];
  flagButton: HTMLButtonElement;
  status: HTMLElement;
  alts: HTMLElement;
  altList: HTMLUListElement;
  altSig: string;
  writers: HTMLElement;
  humanShown: HTMLElement;
  humanForm: HTMLFormElement;
  humanInput: HTMLTextAreaElement;
  humanLabel: HTMLElement;
  newAltForm: HTMLFormElement;
  newAltInput: HTMLTextAreaElement;
}

export class Workspace {
  private readonly api: Api;
  private task: Task | null = null;
  private state: LabelingState | null = null;
  private key = "";
  private rev = 0;
  private timer = new ActiveTimer(0);
  private submitting = false;
  private steps: StepView[] = [];
  private draftTimer: number | undefined;
  private serverSaved = true;
  private pending: SubmitPayload | null = null;

  // Fixed parts of the page.
  private readonly bar: HTMLElement;
  private readonly position = h("span", { class: "sl-position" });
  private readonly clock = h("span", { class: "sl-clock", title: "Active time on this solution" });
  private readonly saveState = h("span", { class: "sl-save", "aria-live": "polite" });
  private readonly notice = h("div", { class: "sl-notice", role: "status", "aria-live": "polite" });
  private readonly alert = h("div", { class: "sl-alert", role: "alert" });
  private readonly empty: HTMLElement;
  private readonly taskArea = h("div", { class: "sl-task" });
  private readonly problemBody = h("div", { class: "sl-md sl-problem-text" });
  private readonly groundTruth = h("p", { class: "sl-gt" });
  private readonly stepList = h("ol", { class: "sl-steps", "aria-label": "Solution steps" });
  private readonly footer = h("p", { class: "sl-footer", "aria-live": "polite" });
  private readonly submitButton: HTMLButtonElement;
  private readonly giveUpButton: HTMLButtonElement;
  private readonly badButton: HTMLButtonElement;
  private readonly skipButton: HTMLButtonElement;
  private readonly progress = h("dl", { class: "sl-progress" });
  private readonly reasonDialog: HTMLDialogElement;
  private readonly reasonTitle = h("h2", { id: "sl-reason-title" });
  private readonly reasonInput: HTMLTextAreaElement;
  private reasonKind: GiveUpReason = "give_up";
  private readonly shortcutsDialog: HTMLDialogElement;

  constructor(
    root: HTMLElement,
    private readonly config: WorkspaceConfig,
  ) {
    this.api = new Api(config.api_base, config.csrf_token);

    this.submitButton = h("button", { type: "button", class: "sl-btn sl-primary", onclick: () => void this.submit() }, "Submit");
    this.giveUpButton = h("button", { type: "button", class: "sl-btn", onclick: () => this.openReason("give_up") }, "Give up");
    this.badButton = h("button", { type: "button", class: "sl-btn", onclick: () => this.openReason("bad_problem") }, "Bad problem");
    this.skipButton = h("button", { type: "button", class: "sl-btn", onclick: () => void this.skip() }, "Skip");
    const help = h(
      "button",
      { type: "button", class: "sl-btn sl-ghost", "aria-keyshortcuts": "?", onclick: () => this.toggleShortcuts() },
      "Shortcuts (?)",
    );
    this.bar = h(
      "div",
      { class: "sl-bar" },
      h("div", { class: "sl-bar-info" }, this.position, this.clock, this.saveState),
      h("div", { class: "sl-bar-actions" }, this.skipButton, this.giveUpButton, this.badButton, help, this.submitButton),
    );

    this.empty = h(
      "div",
      { class: "sl-empty", hidden: true },
      h("h2", {}, "No more solutions to label right now"),
      h("p", {}, "Everything available to you is labeled or taken. New work appears as the queue refills."),
      h("button", { type: "button", class: "sl-btn", onclick: () => void this.loadNext() }, "Check again"),
    );

    this.taskArea.append(
      h(
        "section",
        { class: "sl-problem", "aria-labelledby": "sl-problem-h" },
        h("h2", { id: "sl-problem-h" }, "Problem"),
        this.problemBody,
        this.groundTruth,
      ),
      h(
        "section",
        { class: "sl-solution", "aria-labelledby": "sl-solution-h" },
        h("h2", { id: "sl-solution-h" }, "Solution"),
        this.stepList,
        this.footer,
      ),
    );

    // Reason dialog for give up / bad problem.
    this.reasonInput = h("textarea", { id: "sl-reason", rows: 3, required: true, maxlength: 2000 });
    const reasonForm = h(
      "form",
      { method: "dialog", class: "sl-dialog-body" },
      this.reasonTitle,
      h("label", { for: "sl-reason" }, "Reason (required)"),
      this.reasonInput,
      h("p", { class: "sl-hint" }, "Enter confirms, Shift+Enter adds a line, Esc cancels."),
      h(
        "div",
        { class: "sl-dialog-actions" },
        h("button", { type: "button", class: "sl-btn", onclick: () => this.reasonDialog.close() }, "Cancel"),
        h("button", { type: "submit", class: "sl-btn sl-primary" }, "Confirm"),
      ),
    );
    reasonForm.addEventListener("submit", (e) => {
      e.preventDefault();
      this.confirmReason();
    });
    this.reasonInput.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && !e.shiftKey) {
        e.preventDefault();
        this.confirmReason();
      }
    });
    this.reasonDialog = h("dialog", { class: "sl-dialog", "aria-labelledby": "sl-reason-title" }, reasonForm);

    const rows = SHORTCUTS.map(([k, what]) => h("tr", {}, h("th", { scope: "row" }, h("kbd", {}, k)), h("td", {}, what)));
    this.shortcutsDialog = h(
      "dialog",
      { class: "sl-dialog", "aria-labelledby": "sl-keys-title" },
      h(
        "div",
        { class: "sl-dialog-body" },
        h("h2", { id: "sl-keys-title" }, "Keyboard shortcuts"),
        h("table", { class: "sl-keys" }, h("tbody", {}, ...rows)),
        h("p", { class: "sl-hint" }, "Tab reaches every button too. Esc closes this list."),
        h(
          "div",
          { class: "sl-dialog-actions" },
          h("button", { type: "button", class: "sl-btn", onclick: () => this.shortcutsDialog.close() }, "Close"),
        ),
      ),
    );

    const guidelines = setRendered(
      h("div", { class: "sl-md sl-guidelines" }),
      config.project.guidelines.trim() ? renderMarkdown(config.project.guidelines) : "<p>No guidelines yet.</p>",
    );
    const side = h(
      "aside",
      { class: "sl-side", "aria-label": "Project" },
      h("section", { "aria-labelledby": "sl-today-h" }, h("h2", { id: "sl-today-h" }, "Your progress today"), this.progress),
      h(
        "section",
        { "aria-labelledby": "sl-keyhint-h" },
        h("h2", { id: "sl-keyhint-h" }, "Keys"),
        h(
          "p",
          { class: "sl-keyhint" },
          ...[
            ["1", "Negative"],
            ["2", "Neutral"],
            ["3", "Positive"],
            ["f", "Flag"],
            ["⌫", "Undo"],
            ["Enter", "Submit"],
            ["?", "All keys"],
          ].map(([k, what]) => h("span", { class: "sl-keypair" }, h("kbd", {}, k), ` ${what}`)),
        ),
      ),
      h("section", { "aria-labelledby": "sl-guide-h" }, h("h2", { id: "sl-guide-h" }, "Guidelines"), guidelines),
    );

    const main = h(
      "div",
      { class: "sl-main" },
      h("h1", { class: "sl-title" }, config.project.name || config.project.slug),
      this.bar,
      this.alert,
      this.notice,
      this.empty,
      this.taskArea,
    );
    root.replaceChildren(main, side, this.reasonDialog, this.shortcutsDialog);
    root.classList.add("sl-ready");
    this.alert.hidden = true;
    this.taskArea.hidden = true;
  }

  // ------------------------------------------------------------------------------------------
  // Lifecycle
  // ------------------------------------------------------------------------------------------

  start(): void {
    document.addEventListener("keydown", (e) => this.onKey(e));
    for (const ev of ["keydown", "pointerdown", "wheel", "scroll", "pointermove"]) {
      window.addEventListener(ev, () => this.timer.activity(), { passive: true, capture: true });
    }
    document.addEventListener("visibilitychange", () => {
      this.timer.setVisible(document.visibilityState === "visible");
      if (document.visibilityState === "hidden") this.flushDraft(true);
    });
    window.addEventListener("pagehide", () => this.flushDraft(true));
    window.setInterval(() => this.tick(), 1_000);
    window.setInterval(() => void this.heartbeat(), this.config.heartbeat_ms ?? HEARTBEAT_MS);
    void this.refreshProgress();
    void this.loadNext();
  }

  private tick(): void {
    if (!this.task) return;
    const s = Math.floor(this.timer.elapsedMs() / 1000);
    this.clock.textContent = `Active ${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}${this.timer.running ? "" : " (paused)"}`;
  }

  async loadNext(): Promise<void> {
    this.say("Loading the next solution…");
    try {
      const task = await this.api.nextTask(this.config.project.slug);
      this.say("");
      this.show(task);
    } catch (e) {
      this.show(null, false);
      this.fail(e instanceof Error ? e.message : "Could not load a task.");
    }
  }

  /** Show a task (or the empty-queue message), restoring its draft. */
  private show(task: Task | null, emptyMessage = true): void {
    this.task = task;
    this.submitting = false;
    this.pending = null;
    this.hideAlert();
    window.clearTimeout(this.draftTimer);
    if (!task) {
      this.state = null;
      this.taskArea.hidden = true;
      this.bar.hidden = true;
      this.empty.hidden = !emptyMessage;
      return;
    }
    this.empty.hidden = true;
    this.bar.hidden = false;
    this.taskArea.hidden = false;
    const draft = pickDraft(loadLocal(task.assignmentId), task.draft);
    this.key = draft?.key ?? newIdempotencyKey();
    this.rev = draft?.rev ?? 0;
    this.timer = new ActiveTimer(draft?.elapsed_ms ?? 0);
    // Reading the new task is work: the clock runs from the moment it is shown.
    if (document.visibilityState === "visible") this.timer.activity();
    else this.timer.setVisible(false);
    this.state = restore(task.mode, task.steps, draft?.labels ?? null);
    this.pending = draft?.pending ?? null;
    pruneLocal(task.assignmentId);
    this.persist(!draft); // the key is stored before any rating
    this.serverSaved = draft !== null;

    setRendered(this.problemBody, renderMarkdown(task.problem.text));
    const gta = task.problem.groundTruthAnswer;
    this.groundTruth.hidden = !(this.config.project.show_ground_truth && gta);
    if (gta) {
      this.groundTruth.replaceChildren(
        h("strong", {}, "Ground-truth answer: "),
        setRendered(h("span", { class: "sl-md" }), renderMarkdown(gta, { inline: true })),
      );
    }
    this.tick();
    this.steps = task.steps.map((st, i) => this.buildStep(i, st.text));
    this.stepList.replaceChildren(...this.steps.map((v) => v.li));
    this.render();
    window.scrollTo({ top: 0 });
    this.focusCurrent();
    // Only work that was actually restored is announced (an untouched task also has a draft: its key).
    if (draft && hasWork(this.state)) this.say("Resumed your saved work on this solution.");
    if (this.pending) void this.sendSubmit(this.pending);
  }

  // ------------------------------------------------------------------------------------------
  // Building and rendering
  // ------------------------------------------------------------------------------------------

  private buildStep(i: number, text: string): StepView {
    const n = i + 1;
    const rateButtons = RATING_BUTTONS.map((b) =>
      h(
        "button",
        {
          type: "button",
          class: `sl-rate sl-${b.cls}`,
          "aria-pressed": "false",
          "aria-keyshortcuts": b.key,
          onclick: () => this.act((s) => rate({ ...s, focus: { kind: "main" } }, b.rating)),
        },
        h("span", { class: "sl-sym", "aria-hidden": "true" }, b.symbol),
        b.name,
        h("kbd", { "aria-hidden": "true" }, b.key),
      ),
    );
    const flagButton = h(
      "button",
      {
        type: "button",
        class: "sl-flag",
        "aria-pressed": "false",
        onclick: () => this.act((s) => toggleFlagAt(s, { step: i, alt: null })),
      },
      h("span", { class: "sl-sym", "aria-hidden": "true" }, "⚑"),
      "Flag",
      h("kbd", { "aria-hidden": "true", hidden: true }, "f"),
    );
    const status = h("span", { class: "sl-step-status" });
    const altList = h("ul", { class: "sl-alt-list" });
    const alts = h("div", { class: "sl-alts" }, h("h3", {}, `Alternatives at step ${n}`), altList);

    const humanInput = h("textarea", { id: `sl-human-${i}`, rows: 2, maxlength: 5000 });
    const humanLabel = h("label", { for: `sl-human-${i}` }, "Corrected step");
    const humanForm = h(
      "form",
      { class: "sl-writer" },
      humanLabel,
      humanInput,
      h("div", { class: "sl-writer-actions" }, h("button", { type: "submit", class: "sl-btn sl-small" }, "Save step"), h("span", { class: "sl-hint" }, "Enter saves · Shift+Enter new line · Esc leaves")),
    );
    humanForm.addEventListener("submit", (e) => {
      e.preventDefault();
      this.commitHuman(i);
    });
    const newAltInput = h("textarea", { id: `sl-newalt-${i}`, rows: 2, maxlength: 5000 });
    const newAltForm = h(
      "form",
      { class: "sl-writer" },
      h("label", { for: `sl-newalt-${i}` }, "New alternative step"),
      newAltInput,
      h("div", { class: "sl-writer-actions" }, h("button", { type: "submit", class: "sl-btn sl-small" }, "Add alternative"), h("span", { class: "sl-hint" }, "Enter adds it, then rate it with 1/2/3")),
    );
    newAltForm.addEventListener("submit", (e) => {
      e.preventDefault();
      this.commitNewAlt(i);
    });
    for (const [input, commit] of [
      [humanInput, () => this.commitHuman(i)],
      [newAltInput, () => this.commitNewAlt(i)],
    ] as const) {
      input.addEventListener("keydown", (e) => {
        if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
          e.preventDefault();
          commit();
        } else if (e.key === "Escape") {
          e.preventDefault();
          this.act(blurWriter, false);
        }
      });
    }
    const humanShown = h("div", { class: "sl-human-shown" });
    const writers = h(
      "div",
      { class: "sl-writers" },
      h(
        "div",
        { class: "sl-writer-open" },
        h("button", { type: "button", class: "sl-btn sl-small", "aria-keyshortcuts": "a", onclick: () => this.act((s) => focusWriter(s, "newalt"), false) }, "Write alternative (a)"),
        h("button", { type: "button", class: "sl-btn sl-small sl-write-human", "aria-keyshortcuts": "c", onclick: () => this.act((s) => focusWriter(s, "human"), false) }, "Write corrected step (c)"),
      ),
      newAltForm,
      humanForm,
    );
    const li = h(
      "li",
      { class: "sl-step", tabindex: -1, "aria-label": `Step ${n}` },
      h("div", { class: "sl-step-head" }, h("span", { class: "sl-step-n" }, `Step ${n}`), status),
      setRendered(h("div", { class: "sl-md sl-step-text" }), renderStep(text)),
      h("div", { class: "sl-rate-group", role: "group", "aria-label": `Rate step ${n}` }, ...rateButtons, flagButton),
      humanShown,
      alts,
      writers,
    );
    return { li, rateButtons, flagButton, status, alts, altList, altSig: "", writers, humanShown, humanForm, humanInput, humanLabel, newAltForm, newAltInput };
  }

  private render(): void {
    const s = this.state;
    if (!s || !this.task) return;
    const cur = currentIndex(s);
    const visible = visibleCount(s);
    const err = errorIndex(s);
    const canWrite = canAddAlternatives(s);
    const fTarget = flagTarget(s);
    this.steps.forEach((v, i) => {
      const l = s.labels[i];
      const isCur = i === cur;
      v.li.hidden = i >= visible;
      v.li.classList.toggle("sl-current", isCur);
      v.li.classList.toggle("sl-error", i === err);
      v.li.classList.toggle("sl-flagged", l.flagged);
      if (isCur) v.li.setAttribute("aria-current", "step");
      else v.li.removeAttribute("aria-current");
      const mainActive = isCur && l.rating === null;
      v.rateButtons.forEach((b, k) => {
        setPressed(b, l.rating === RATING_BUTTONS[k].rating);
        b.disabled = !mainActive;
      });
      setPressed(v.flagButton, l.flagged);
      v.flagButton.disabled = i >= visible;
      markFlagKey(v.flagButton, fTarget?.step === i && fTarget.alt === null);
      v.li.classList.toggle("sl-focus-main", isCur && s.focus.kind === "main" && l.rating === null);
      v.status.textContent =
        l.rating === null ? (isCur ? "rate this step" : "") : `${ratingName(l.rating)}${l.flagged ? " · flagged" : ""}`;
      v.status.dataset.rating = l.rating === null ? "" : String(l.rating);

      // Alternatives: rebuilt only when their texts change; ratings update in place.
      const sig = JSON.stringify(l.alternatives.map((a) => a.text));
      if (sig !== v.altSig) {
        v.altSig = sig;
        v.altList.replaceChildren(...l.alternatives.map((a, j) => this.buildAlt(i, j, a.text, a.offered)));
      }
      v.alts.hidden = l.alternatives.length === 0 || (!isCur && l.alternatives.every((a) => a.rating === null));
      Array.from(v.altList.children).forEach((item, j) => {
        const a = l.alternatives[j];
        const focused = isCur && s.focus.kind === "alt" && s.focus.alt === j;
        item.classList.toggle("sl-alt-focus", focused);
        item.querySelectorAll<HTMLButtonElement>("button.sl-rate").forEach((b, k) => {
          setPressed(b, a.rating === RATING_BUTTONS[k].rating);
          b.disabled = !(isCur && l.rating !== null);
        });
        const fb = item.querySelector<HTMLButtonElement>("button.sl-flag");
        if (fb) {
          setPressed(fb, a.flagged);
          fb.disabled = i >= visible;
          markFlagKey(fb, fTarget?.step === i && fTarget.alt === j);
        }
      });

      v.humanShown.hidden = l.human === null;
      v.humanShown.replaceChildren();
      if (l.human !== null) {
        v.humanShown.append(
          h("strong", {}, s.mode === "phase1" ? "Your step: " : "Corrected step: "),
          setRendered(h("span", { class: "sl-md" }), renderMarkdown(l.human, { inline: true })),
        );
      }
      v.writers.hidden = !(isCur && canWrite);
      v.humanLabel.textContent = s.mode === "phase1" ? "Your own step (none here is Positive)" : "Corrected step";
      const writeHuman = v.writers.querySelector(".sl-write-human");
      if (writeHuman) writeHuman.textContent = s.mode === "phase1" ? "Write your own step (c)" : "Write corrected step (c)";
      v.humanForm.hidden = !(isCur && s.focus.kind === "human");
      v.newAltForm.hidden = !(isCur && s.focus.kind === "newalt");
    });

    this.tick();
    const total = s.steps.length;
    this.position.textContent =
      cur === null ? `All ${total} steps rated` : `Step ${cur + 1} of ${total} · ${ratedCount(s)} rated`;
    const reason = finishReason(s);
    this.submitButton.disabled = this.submitting || reason === null;
    this.giveUpButton.disabled = this.submitting;
    this.badButton.disabled = this.submitting;
    this.skipButton.disabled = this.submitting;
    this.footer.textContent = this.footerText(s, reason);
  }

  private footerText(s: LabelingState, reason: string | null): string {
    if (this.submitting) return "Submitting…";
    if (reason === "solution") return "Every step is rated. Press Enter to submit (finish: solution).";
    if (reason === "found_error") {
      return "You found the error: press Enter to submit (finish: found error), or first rate alternatives here (a to write one) or write the corrected step (c).";
    }
    if (needsHumanStep(s)) return "Nothing here is Positive: write your own step (c), then Enter to save it.";
    const cur = currentIndex(s);
    if (cur !== null && s.labels[cur].rating !== null && s.mode === "phase1") {
      return "Rate the alternatives (1/2/3), or press n to move on.";
    }
    if (s.labels.some((l) => l.alternatives.some((a) => !a.offered && a.rating === null))) {
      return "Rate the alternative you wrote (1/2/3) before submitting.";
    }
    const last = flagTarget(s);
    const unsure = last === null ? "" : ` f flags your last rating (step ${last.step + 1}${last.alt === null ? "" : `, alternative ${last.alt + 1}`}).`;
    return `Rate the highlighted step: 1 Negative · 2 Neutral · 3 Positive.${unsure}`;
  }

  private buildAlt(i: number, j: number, text: string, offered: boolean): HTMLLIElement {
    const buttons = RATING_BUTTONS.map((b) =>
      h(
        "button",
        {
          type: "button",
          class: `sl-rate sl-${b.cls}`,
          "aria-pressed": "false",
          "aria-keyshortcuts": b.key,
          onclick: () => this.act((s) => (currentIndex(s) === i ? rate({ ...s, focus: { kind: "alt", alt: j } }, b.rating) : s)),
        },
        h("span", { class: "sl-sym", "aria-hidden": "true" }, b.symbol),
        b.name,
        h("kbd", { "aria-hidden": "true" }, b.key),
      ),
    );
    const flag = h(
      "button",
      {
        type: "button",
        class: "sl-flag",
        "aria-pressed": "false",
        onclick: () => this.act((s) => toggleFlagAt(s, { step: i, alt: j })),
      },
      h("span", { class: "sl-sym", "aria-hidden": "true" }, "⚑"),
      "Flag",
      h("kbd", { "aria-hidden": "true", hidden: true }, "f"),
    );
    return h(
      "li",
      { class: "sl-alt", tabindex: -1, "aria-label": `Alternative ${j + 1}${offered ? "" : " (yours)"}` },
      setRendered(h("div", { class: "sl-md sl-alt-text" }), renderStep(text)),
      h("div", { class: "sl-rate-group", role: "group", "aria-label": `Rate alternative ${j + 1}` }, ...buttons, flag),
    );
  }

  /** Move keyboard focus to what the state says is in focus, so keys and screen readers follow. */
  private focusCurrent(): void {
    const s = this.state;
    if (!s) return;
    const cur = currentIndex(s);
    if (cur === null) {
      this.submitButton.focus({ preventScroll: true });
      this.steps[this.steps.length - 1]?.li.scrollIntoView({ block: "nearest" });
      return;
    }
    const v = this.steps[cur];
    let target: HTMLElement = v.li;
    if (s.focus.kind === "human") target = v.humanInput;
    else if (s.focus.kind === "newalt") target = v.newAltInput;
    else if (s.focus.kind === "alt") target = (v.altList.children[s.focus.alt] as HTMLElement | undefined) ?? v.li;
    target.focus({ preventScroll: true });
    target.scrollIntoView({ block: "nearest", behavior: "instant" as ScrollBehavior });
  }

  // ------------------------------------------------------------------------------------------
  // Actions
  // ------------------------------------------------------------------------------------------

  /** Apply a state transition; save and re-render when something changed. */
  private act(fn: (s: LabelingState) => LabelingState, save = true): void {
    if (!this.state || this.submitting) return;
    const next = fn(this.state);
    if (next === this.state) return;
    const labelsChanged = next.labels !== this.state.labels;
    this.state = next;
    if (labelsChanged && save) this.persist(true);
    this.render();
    this.focusCurrent();
  }

  private commitHuman(i: number): void {
    const v = this.steps[i];
    this.act((s) => (currentIndex(s) === i ? setHumanStep(s, v.humanInput.value) : s));
    if (this.state && this.state.focus.kind !== "human") v.humanInput.value = "";
  }

  private commitNewAlt(i: number): void {
    const v = this.steps[i];
    const text = v.newAltInput.value;
    if (text.trim() === "") return;
    this.act((s) => (currentIndex(s) === i ? addAlternative(s, text) : s));
    v.newAltInput.value = "";
  }

  private onKey(e: KeyboardEvent): void {
    if (this.reasonDialog.open || this.shortcutsDialog.open) {
      if (e.key === "?" && this.shortcutsDialog.open) {
        e.preventDefault();
        this.shortcutsDialog.close();
      }
      return;
    }
    const t = e.target as HTMLElement | null;
    const tag = t?.tagName;
    if (tag === "TEXTAREA" || tag === "INPUT" || tag === "SELECT" || t?.isContentEditable) return;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === "?") {
      e.preventDefault();
      this.toggleShortcuts();
      return;
    }
    if (!this.state) return;
    switch (e.key) {
      case "1":
      case "2":
      case "3":
        e.preventDefault();
        this.act((s) => rate(s, (Number(e.key) - 2) as Rating));
        return;
      case "f":
      case "F":
        e.preventDefault();
        if (flagTarget(this.state) === null) this.say("Nothing rated yet: f flags a rating once you have given it.");
        else this.act(toggleFlag);
        return;
      case "Backspace":
        e.preventDefault();
        this.act(undo);
        return;
      case "Enter":
        if (tag === "BUTTON" && t !== this.submitButton) return; // let Enter press the focused button
        e.preventDefault();
        void this.submit();
        return;
      case "a":
        e.preventDefault();
        this.act((s) => focusWriter(s, "newalt"), false);
        return;
      case "c":
        e.preventDefault();
        this.act((s) => focusWriter(s, "human"), false);
        return;
      case "n":
        e.preventDefault();
        this.act(nextStep);
        return;
      case "g":
        e.preventDefault();
        this.openReason("give_up");
        return;
      case "b":
        e.preventDefault();
        this.openReason("bad_problem");
        return;
      case "ArrowDown":
      case "j":
      case "ArrowUp":
      case "k": {
        const cur = currentIndex(this.state);
        if (cur === null || this.state.labels[cur].alternatives.length === 0) return; // plain scrolling
        e.preventDefault();
        this.act((s) => moveFocus(s, e.key === "ArrowDown" || e.key === "j" ? 1 : -1), false);
        return;
      }
      default:
        return;
    }
  }

  private toggleShortcuts(): void {
    if (this.shortcutsDialog.open) this.shortcutsDialog.close();
    else this.shortcutsDialog.showModal();
  }

  private openReason(kind: GiveUpReason): void {
    if (!this.state || this.submitting) return;
    this.reasonKind = kind;
    this.reasonTitle.textContent = kind === "give_up" ? "Give up on this solution" : "Report a bad problem";
    this.reasonInput.value = "";
    this.reasonDialog.showModal();
    this.reasonInput.focus();
  }

  private confirmReason(): void {
    const note = this.reasonInput.value.trim();
    if (note === "") {
      this.reasonInput.setAttribute("aria-invalid", "true");
      this.reasonInput.reportValidity();
      return;
    }
    this.reasonInput.removeAttribute("aria-invalid");
    this.reasonDialog.close();
    void this.submit({ reason: this.reasonKind, note });
  }

  // ------------------------------------------------------------------------------------------
  // Saving, heartbeats, submitting
  // ------------------------------------------------------------------------------------------

  private draft(): Draft {
    return {
      v: 1,
      rev: this.rev,
      saved_at: new Date().toISOString(),
      key: this.key,
      elapsed_ms: Math.round(this.timer.elapsedMs()),
      labels: this.state ? toSaved(this.state) : null,
      pending: this.pending,
    };
  }

  /** Save locally now and (debounced) on the server. */
  private persist(toServer: boolean): void {
    if (!this.task) return;
    this.rev += 1;
    saveLocal(this.task.assignmentId, this.draft());
    if (!toServer) return;
    this.serverSaved = false;
    this.saveState.textContent = "Saving…";
    window.clearTimeout(this.draftTimer);
    this.draftTimer = window.setTimeout(() => this.flushDraft(false), DRAFT_DEBOUNCE_MS);
  }

  private flushDraft(keepalive: boolean): void {
    const task = this.task;
    if (!task || this.serverSaved || this.submitting) return;
    window.clearTimeout(this.draftTimer);
    const draft = this.draft();
    saveLocal(task.assignmentId, draft);
    if (keepalive) {
      // The page is going away: a keepalive request outlives it.
      void fetch(`${this.config.api_base}assignments/${task.assignmentId}/draft/`, {
        method: "PUT",
        keepalive: true,
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRFToken": this.config.csrf_token },
        body: JSON.stringify(draft),
      }).catch(() => undefined);
      return;
    }
    this.api.saveDraft(task.assignmentId, draft).then(
      (r) => {
        if (this.task !== task) return;
        if (r.status >= 200 && r.status < 300) {
          if (draft.rev === this.rev) {
            this.serverSaved = true;
            this.saveState.textContent = "Saved";
          }
        } else if (r.status === 409 || r.status === 404 || r.status === 410) {
          this.saveState.textContent = "Saved in this browser";
          this.fail(errorText(r.data, "This solution is no longer yours to label; your work is kept in this browser."));
        } else {
          this.saveState.textContent = "Saved in this browser (server save failed, will retry)";
        }
      },
      () => {
        if (this.task === task) this.saveState.textContent = "Offline: saved in this browser, will retry";
      },
    );
  }

  private async heartbeat(): Promise<void> {
    const task = this.task;
    if (!task || this.submitting) return;
    if (!this.serverSaved) this.flushDraft(false);
    try {
      const r = await this.api.heartbeat(task.assignmentId);
      if (this.task !== task) return;
      if (r.status === 409 || r.status === 404 || r.status === 410) {
        this.fail(errorText(r.data, "Your lease on this solution ended. Your work is kept in this browser."));
      }
    } catch {
      /* offline: the next beat tries again */
    }
    void this.refreshProgress();
  }

  private async submit(giveUp?: { reason: GiveUpReason; note: string }): Promise<void> {
    const s = this.state;
    if (!s || !this.task || this.submitting) return; // a second press while sending does nothing
    let payload: SubmitPayload;
    try {
      payload = buildPayload(s, { idempotencyKey: this.key, totalTimeMs: this.timer.elapsedMs(), giveUp });
    } catch (e) {
      if (e instanceof IncompleteLabelingError) this.say(`Not ready to submit: ${e.message}.`);
      return;
    }
    this.pending = payload;
    this.persist(false);
    await this.sendSubmit(payload);
  }

  private async sendSubmit(payload: SubmitPayload): Promise<void> {
    const task = this.task;
    if (!task || this.submitting) return;
    this.submitting = true;
    window.clearTimeout(this.draftTimer);
    this.hideAlert();
    this.render();
    this.say("Submitting…");
    const outcome = await submitUntilAcknowledged(() => this.api.submit(task.assignmentId, payload), {
      onRetry: (n, why) => this.say(`Could not reach the server (${why}); retrying, attempt ${n + 1}. Your work is safe.`),
    });
    if (this.task !== task) return;
    if (!outcome.ok) {
      this.submitting = false;
      this.pending = null;
      this.persist(false);
      this.render();
      this.say("");
      const hint = outcome.status === 409 ? " Reload the page to get the next solution." : "";
      this.fail(`Not submitted: ${outcome.message}${hint}`);
      return;
    }
    clearLocal(task.assignmentId);
    const data = outcome.data ?? {};
    const nextField = ["next_task", "next"].find((k) => k in data);
    this.say("Submitted.");
    void this.refreshProgress();
    if (nextField !== undefined) {
      const nt = data[nextField];
      const following = nt && typeof nt === "object" ? parseTask(nt as Record<string, unknown>) : null;
      this.show(following);
      this.say(following ? "Submitted. Here is the next solution." : "Submitted.");
      if (typeof data.detail === "string" && data.detail) this.fail(data.detail);
    } else {
      await this.loadNext();
    }
  }

  /** Release the task without labels; the response carries the next one. */
  private async skip(): Promise<void> {
    const task = this.task;
    if (!task || this.submitting) return;
    this.submitting = true;
    this.render();
    try {
      const r = await this.api.skip(task.assignmentId);
      if (this.task !== task) return;
      if (r.status === 200) {
        clearLocal(task.assignmentId);
        const nt = (r.data as Record<string, unknown> | null)?.next;
        this.show(nt && typeof nt === "object" ? parseTask(nt as Record<string, unknown>) : null);
        this.say("Skipped.");
        return;
      }
      this.submitting = false;
      this.render();
      this.fail(`Not skipped: ${errorText(r.data, `the server answered ${r.status}`)}`);
    } catch {
      this.submitting = false;
      this.render();
      this.fail("Not skipped: the server could not be reached. Try again.");
    }
  }

  private async refreshProgress(): Promise<void> {
    try {
      const me = await this.api.me(this.config.project.slug);
      if (me) this.renderProgress(me);
    } catch {
      /* the panel keeps its last numbers */
    }
  }

  private renderProgress(me: Record<string, unknown>): void {
    const num = (k: string): number => (typeof me[k] === "number" ? (me[k] as number) : 0);
    const rows: [string, string][] = [
      ["Solutions today", String(num("solutions_today"))],
      ["Steps today", String(num("steps_today"))],
      ["Active time today", formatDuration(num("time_today_ms"))],
      ["Solutions in all", String(num("solutions_total"))],
    ];
    const screening = me.screening as { required?: number; submitted?: number; status?: string } | undefined;
    if (screening && (screening.required ?? 0) > 0 && screening.status !== "not_required") {
      rows.push(["Screening", `${screening.status ?? "pending"} (${screening.submitted ?? 0} of ${screening.required})`]);
    }
    this.progress.replaceChildren(...rows.flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
  }

  private say(text: string): void {
    this.notice.textContent = text;
  }

  private fail(text: string): void {
    this.alert.textContent = text;
    this.alert.hidden = false;
  }

  private hideAlert(): void {
    this.alert.hidden = true;
    this.alert.textContent = "";
  }
}

/** The `f` badge shows on the one Flag button that the key acts on (the rating given last). */
function markFlagKey(button: HTMLButtonElement, isTarget: boolean): void {
  const kbd = button.querySelector("kbd");
  if (kbd) kbd.hidden = !isTarget;
  if (isTarget) button.setAttribute("aria-keyshortcuts", "f");
  else button.removeAttribute("aria-keyshortcuts");
}

function ratingName(r: Rating): string {
  return r === 1 ? "Positive" : r === 0 ? "Neutral" : "Negative";
}

function errorText(data: unknown, fallback: string): string {
  if (data && typeof data === "object" && typeof (data as { detail?: unknown }).detail === "string") {
    return (data as { detail: string }).detail;
  }
  return fallback;
}

export function formatDuration(ms: number): string {
  if (ms < 60_000) return `${Math.round(ms / 1000)} s`;
  const min = Math.round(ms / 60_000);
  return min >= 60 ? `${Math.floor(min / 60)} h ${min % 60} min` : `${min} min`;
}

