/**
 * The annotator workspace: the page around one task. Keys go through the key map (keymap.ts) to
 * the labeling state machine (labeling/state.ts); steps draw themselves (stepview.ts); the work is
 * kept safe by the session (session.ts); dialogs and key hints come from dialogs.ts.
 */
import {
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
  missingCritique,
  moveFocus,
  nextStep,
  openCritique,
  critiqueTarget,
  rate,
  ratedCount,
  restore,
  toggleFlag,
  toSaved,
  undo,
  visibleCount,
} from "../labeling/state";
import type { MyProgress } from "../api/types";
import { renderAnswer, renderMarkdown } from "../render/markdown";
import { h, setRendered } from "../shared/dom";
import { Api, type Task } from "./api";
import { ConfirmDialog, keyHints, ReasonDialog, ShortcutsDialog } from "./dialogs";
import {
  actionFor,
  focusInWorkspace,
  focusTakesKey,
  ignoredRepeat,
  type KeyAction,
  keyFor,
  keysNamed,
  listedFor,
  onTouchScreenChange,
  ratingOf,
  setSingleKeys,
  singleKeysOn,
} from "./keymap";
import {
  describeChange,
  EMPTY_TEXT,
  emptyQueueText,
  guidance,
  modeNote,
  nextStepWhy,
  positionText,
  unrateableWhy,
  writerWhy,
} from "./guidance";
import { renderProgress } from "./progress";
import { RefusedNotice } from "./refused";
import { RepeatedSubmitGuard } from "./repeat";
import { watchPage } from "./autosave";
import { Session } from "./session";
import { StepView } from "./stepview";

type KindViews = typeof import("./stepbody");
/** Code and trace rendering with its highlighter: a chunk of its own, fetched for the first such task. */
let kindViews: Promise<KindViews | null> | null = null;
function loadKindViews(): Promise<KindViews | null> {
  kindViews ??= import("./stepbody").catch(() => null);
  return kindViews;
}

export interface WorkspaceConfig {
  project: {
    slug: string;
    name: string;
    mode: string;
    show_ground_truth: boolean;
    guidelines: string;
    /** "compare": two solutions side by side (compare.ts); else step labels. */
    task_kind?: string;
  };
  api_base: string;
  csrf_token: string;
  username: string;
  /** How often the lease is extended while the page is open. */
  heartbeat_ms?: number;
}

const NOT_READY = "Not ready to submit:";
/** Save states a screen reader is told of: the work not (yet) on the server. "Saving…", "Saved" and
 * "Submitted" are not read out (each rating said "Saving…", then "Saved"). */
const SAVE_TROUBLE = /offline|retry|logged out|failed|in this browser/i;
const HEARTBEAT_MS = 60_000;

export class Workspace {
  private readonly api: Api;
  private readonly session: Session;
  private state: LabelingState | null = null;
  private steps: StepView[] = [];

  // Fixed parts of the page.
  private readonly bar: HTMLElement;
  private readonly position = h("span", { class: "sl-position" });
  private readonly clock = h("span", { class: "sl-clock", title: "Active time on this solution" });
  /** Where the work is ("Saving…", "Saved"): shown, not read out on every rating. */
  private readonly saveState = h("span", { class: "sl-save" });
  /** What a screen reader hears of it: a failed or local-only save, once. */
  private readonly saveNews = h("span", { class: "sl-sr-only", role: "status" });
  private readonly emptyText = h("p", {}, EMPTY_TEXT);
  private readonly emptyHeading = h("h2", {}, "No more solutions to label right now");
  private readonly checkAgain = h("button", { type: "button", class: "sl-btn", onclick: () => void this.loadNext() }, "Check again");
  private readonly notice = h("div", { class: "sl-notice", role: "status", "aria-live": "polite" });
  /** What the last change of the labels did ("Step 1 rated Positive."), for a screen reader: a
   * key that leaves focus in place changes only the focused step's text, which is not read out. */
  private readonly keyNews = h("div", { class: "sl-sr-only sl-keynews", "aria-live": "polite" });
  private readonly alert = h("div", { class: "sl-alert", role: "alert" });
  private readonly empty: HTMLElement;
  private readonly taskArea = h("div", { class: "sl-task" });
  private readonly problemBody = h("div", { class: "sl-md sl-problem-text" });
  private readonly groundTruth = h("p", { class: "sl-gt" });
  private readonly tests = h("div", { class: "sl-tests" });
  private readonly stepList = h("ol", { class: "sl-steps", "aria-label": "Solution steps" });
  /** What the project's labeling mode asks (phase 1 only: the footer walks phase 2 through). */
  private readonly modeNote = h("p", { class: "sl-mode-note", hidden: true });
  private readonly footer = h("p", { class: "sl-footer" });
  private readonly submitButton: HTMLButtonElement;
  private readonly giveUpButton: HTMLButtonElement;
  private readonly badButton: HTMLButtonElement;
  private readonly skipButton: HTMLButtonElement;
  /** Backspace's undo as a button: on a phone (no keyboard) a rated step's buttons are disabled,
   * so a mistaken tap could only be mended by skipping the whole solution. */
  private readonly undoButton: HTMLButtonElement;
  /** The key list's button, "Shortcuts (?)" while the keys act. */
  private readonly helpButton: HTMLButtonElement;
  private readonly progress = h("dl", { class: "sl-progress" });
  private readonly reasonDialog: ReasonDialog;
  private readonly shortcutsDialog: ShortcutsDialog;
  private readonly confirmDialog = new ConfirmDialog();
  private readonly refused: RefusedNotice;
  /** The single-key shortcuts' switch in the Keys panel (remembered in this browser). */
  private readonly keysOn: HTMLInputElement;

  constructor(
    private readonly root: HTMLElement,
    private readonly config: WorkspaceConfig,
  ) {
    this.api = new Api(config.api_base, config.csrf_token);
    const keys = listedFor("steps", config.project.mode === "phase1" ? "phase1" : "phase2");
    this.shortcutsDialog = new ShortcutsDialog(keys);
    this.session = new Session(
      this.api,
      {
        labels: () => (this.state ? toSaved(this.state) : null),
        typing: () => Object.assign({}, ...this.steps.map((v) => v.typing())),
        saveState: (text) => this.showSaveState(text),
        say: (text) => this.say(text),
        fail: (message) => this.fail(message),
        hideAlert: () => this.hideAlert(),
        busyChanged: () => this.render(),
        showNext: (task) => this.show(task),
        loadNext: () => this.loadNext(),
        progressChanged: () => void this.refreshProgress(),
        refusedListed: async (id) => (await this.refreshProgress())?.refused_submits?.some((r) => r.assignment_id === id) ?? false,
      },
      config.project.slug,
    );
    this.reasonDialog = new ReasonDialog((kind, note) => void this.submit({ reason: kind, note }));
    // Dismissing a refused submit clears the expired assignment's draft, where the server kept it.
    this.refused = new RefusedNotice(async (id) => {
      try {
        const r = await this.api.saveDraft(id, null);
        return r.status >= 200 && r.status < 300;
      } catch {
        return false;
      }
    }, () => this.focusCurrent());

    this.submitButton = h("button", { type: "button", class: "sl-btn sl-primary", onclick: () => void this.submit() }, "Submit");
    this.giveUpButton = h("button", { type: "button", class: "sl-btn", onclick: () => this.openReason("give_up") }, "Give up");
    this.badButton = h("button", { type: "button", class: "sl-btn", onclick: () => this.openReason("bad_problem") }, "Bad problem");
    this.skipButton = h("button", { type: "button", class: "sl-btn", onclick: () => void this.skip() }, "Skip");
    this.undoButton = h(
      "button",
      { type: "button", class: "sl-btn", "aria-keyshortcuts": "Backspace", onclick: () => this.act(undo) },
      "Undo",
    );
    this.helpButton = h(
      "button",
      // sl-keys-only: a list of keys is no use on a touch screen (its `?` still opens it from a keyboard)
      { type: "button", class: "sl-btn sl-ghost sl-keys-only", "aria-keyshortcuts": "?", onclick: () => this.shortcutsDialog.toggle() },
      "Shortcuts (?)",
    );
    this.bar = h(
      "div",
      { class: "sl-bar" },
      h("div", { class: "sl-bar-info" }, this.position, this.clock, this.saveState, this.saveNews, this.keyNews),
      h(
        "div",
        { class: "sl-bar-actions" },
        this.undoButton,
        this.skipButton,
        this.giveUpButton,
        this.badButton,
        this.helpButton,
        this.submitButton,
      ),
    );
    // The sticky bar wraps to two or three rows on narrower screens: what focus scrolls to keeps
    // clear of its height as it is (workspace.css reads --sl-bar-h for scroll-margin-top).
    new ResizeObserver(() =>
      document.documentElement.style.setProperty("--sl-bar-h", `${Math.ceil(this.bar.offsetHeight)}px`),
    ).observe(this.bar);

    this.empty = h(
      "div",
      { class: "sl-empty", hidden: true },
      this.emptyHeading,
      this.emptyText,
      this.checkAgain,
    );

    this.taskArea.append(
      h(
        "section",
        { class: "sl-problem", "aria-labelledby": "sl-problem-h" },
        h("h2", { id: "sl-problem-h" }, "Problem"),
        this.problemBody,
        this.tests,
        this.groundTruth,
      ),
      h(
        "section",
        { class: "sl-solution", "aria-labelledby": "sl-solution-h" },
        h("h2", { id: "sl-solution-h" }, "Solution"),
        this.modeNote,
        this.stepList,
        this.footer,
      ),
    );

    // Text typed in a writer box goes into the draft as it is typed (quietly: no "Saving…" per key)
    this.stepList.addEventListener("input", (e) => {
      if (e.target instanceof HTMLTextAreaElement && this.state && !this.session.submitting) this.session.persist(true, true);
    });

    // A scroll box of its own: named, and reachable by Tab to scroll it with the arrow keys. Its
    // headings sit under the panel's "Guidelines" h2 (# is an h3).
    const guidelines = setRendered(
      h("div", { class: "sl-md sl-guidelines", role: "region", "aria-labelledby": "sl-guide-h", tabindex: 0 }),
      config.project.guidelines.trim()
        ? renderMarkdown(config.project.guidelines, { headingLevel: 3 })
        : "<p>No guidelines yet.</p>",
    );
    const hints = keyHints(keys);
    this.keysOn = h("input", { type: "checkbox", checked: singleKeysOn() });
    // Off: no key of the key map acts (WCAG 2.1.4); Tab and the buttons do everything.
    const showKeys = (): void => {
      hints.hidden = !this.keysOn.checked;
      root.classList.toggle("sl-keys-off", !this.namesKeys()); // no key badges on the buttons
      // and no key in a button's name or aria-keyshortcuts (the steps' buttons: StepView.render)
      this.helpButton.textContent = this.namesKeys() ? "Shortcuts (?)" : "Shortcuts";
      for (const [button, key] of [
        [this.helpButton, "?"],
        [this.undoButton, "Backspace"],
      ] as const) {
        if (this.keysOn.checked) button.setAttribute("aria-keyshortcuts", key);
        else button.removeAttribute("aria-keyshortcuts");
      }
      this.showModeNote();
      this.render(); // the footer names buttons, not keys that do nothing
    };
    this.keysOn.addEventListener("change", () => {
      showKeys();
      setSingleKeys(this.keysOn.checked);
    });
    showKeys();
    onTouchScreenChange(showKeys);
    const side = h(
      "aside",
      { class: "sl-side", "aria-label": "Project" },
      h("section", { "aria-labelledby": "sl-today-h" }, h("h2", { id: "sl-today-h" }, "Your progress today"), this.progress),
      h(
        "section",
        { class: "sl-keys-hint", "aria-labelledby": "sl-keyhint-h" },
        h("h2", { id: "sl-keyhint-h" }, "Keys"),
        h("label", { class: "sl-keys-switch" }, this.keysOn, " Single-key shortcuts"),
        hints,
      ),
      h("section", {}, h("h2", { id: "sl-guide-h" }, "Guidelines"), guidelines),
    );

    const main = h(
      "div",
      { class: "sl-main" },
      h("h1", { class: "sl-title" }, config.project.name || config.project.slug),
      this.bar,
      this.alert,
      this.refused.el,
      this.notice,
      this.empty,
      this.taskArea,
    );
    root.replaceChildren(main, side, this.reasonDialog.el, this.confirmDialog.el, this.shortcutsDialog.el);
    root.classList.add("sl-ready");
    this.alert.hidden = true;
    this.taskArea.hidden = true;
  }

  // ------------------------------------------------------------------------------------------
  // Lifecycle
  // ------------------------------------------------------------------------------------------

  start(): void {
    document.addEventListener("keydown", (e) => this.onKey(e));
    watchPage(this.session); // activity for the clock; the draft sent at once when the tab hides or closes
    window.setInterval(() => this.tick(), 1_000);
    window.setInterval(() => void this.session.heartbeat(), this.config.heartbeat_ms ?? HEARTBEAT_MS);
    void this.refreshProgress();
    // another tab (or device) may have submitted while this one was in the background
    document.addEventListener("visibilitychange", () => {
      if (document.visibilityState === "visible") void this.refreshProgress();
    });
    void this.loadNext();
  }

  private tick(): void {
    if (!this.session.task) return;
    const timer = this.session.timer;
    const s = Math.floor(timer.elapsedMs() / 1000);
    this.clock.textContent = `Active ${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}${timer.running ? "" : " (paused)"}`;
  }

  async loadNext(): Promise<void> {
    this.say("Loading the next solution…");
    try {
      const task = await this.api.nextTask(this.config.project.slug);
      this.say("");
      this.show(task);
    } catch (e) {
      this.say(""); // not "Loading…" beside the reason it failed
      this.show(null, false);
      this.fail(e instanceof Error ? e.message : "Could not load a task.");
    }
  }

  private views: KindViews | null = null;
  private viewsTried = false;
  /** Tells a repeated Enter from a new one on the task just shown. */
  private readonly repeat = new RepeatedSubmitGuard();

  /** Show a task (or the empty-queue message), restoring its draft. */
  private show(task: Task | null, emptyMessage = true): void {
    if (task && task.kind !== "math" && !this.viewsTried) {
      // Code and traces draw with a chunk of their own; shown as plain text if it cannot load.
      void loadKindViews().then((views) => {
        this.views = views;
        this.viewsTried = true;
        this.show(task, emptyMessage);
      });
      return;
    }
    this.hideAlert();
    this.reasonDialog.reset();
    this.keyNews.textContent = ""; // news of the last solution's labels, not this one's
    const draft = this.session.begin(task);
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
    this.repeat.shown();
    this.state = restore(task.mode, task.steps, draft?.labels ?? null, {
      critiqueRequired: task.critiqueRequired,
      keepIndent: task.kind === "code",
    });

    setRendered(this.problemBody, renderMarkdown(task.problem.text, { headingLevel: 3 }));
    const gta = task.problem.groundTruthAnswer;
    this.groundTruth.hidden = !(this.config.project.show_ground_truth && gta);
    if (gta) {
      this.groundTruth.replaceChildren(
        h("strong", {}, "Ground-truth answer: "),
        setRendered(h("span", { class: "sl-md" }), renderAnswer(gta)),
      );
    }
    const views = task.kind === "math" ? null : this.views;
    this.tests.hidden = !(task.tests && views);
    this.tests.replaceChildren(...(task.tests && views ? [views.testsBlock(task.tests, task.language)] : []));
    this.showModeNote();
    this.tick();
    const parts = views?.stepParts(task.steps, { kind: task.kind, language: task.language });
    this.steps = task.steps.map(
      (st, i) =>
        new StepView(
        i,
        st,
        (fn, save, scroll) => this.act(fn, save, scroll),
        parts?.[i],
        () => this.perform("next-step"),
      ),
    );
    this.stepList.replaceChildren(...this.steps.map((v) => v.li));
    const typed = this.steps.flatMap((v) => v.restoreTyping(draft?.typing ?? {}));
    this.state = reopenTyped(this.state, typed);
    this.render();
    window.scrollTo({ top: 0 });
    this.focusCurrent();
    // Only work that was actually restored is announced (an untouched task also has a draft: its key).
    const resumed = hasWork(this.state) || typed.length > 0;
    if (draft && resumed) this.say("Resumed your saved work on this solution.");
    this.session.started(draft, !resumed);
  }

  // ------------------------------------------------------------------------------------------
  // Rendering
  // ------------------------------------------------------------------------------------------

  private render(): void {
    const s = this.state;
    if (!s || !this.session.task) return;
    const cur = currentIndex(s);
    const context = {
      cur,
      visible: visibleCount(s),
      err: errorIndex(s),
      canWrite: canAddAlternatives(s),
      flagTarget: flagTarget(s),
      critiqueTarget: critiqueTarget(s),
      critiqueRequired: s.critiqueRequired ?? false,
      keys: this.namesKeys(),
    };
    for (const v of this.steps) v.render(s, context);

    this.tick();
    this.position.textContent = positionText(s);
    const reason = finishReason(s);
    const submitting = this.session.submitting;
    this.submitButton.disabled = submitting || reason === null;
    this.giveUpButton.disabled = submitting;
    this.badButton.disabled = submitting;
    this.skipButton.disabled = submitting;
    this.undoButton.disabled = submitting || s.past.length === 0;
    this.footer.textContent = guidance(s, submitting, this.namesKeys());
  }

  /** Whether texts and buttons name keys: while they act, and not on a touch screen (keymap.ts). */
  private namesKeys(): boolean {
    return keysNamed(this.keysOn.checked);
  }

  /** The line over the steps on the project's mode, naming keys only while they act. */
  private showModeNote(): void {
    const mode = this.state?.mode;
    const note = mode ? modeNote(mode, this.namesKeys()) : null;
    this.modeNote.hidden = note === null;
    this.modeNote.textContent = note ?? "";
  }

  /** Move keyboard focus to what the state says is in focus, so keys and screen readers follow. */
  private focusCurrent(scroll = true): void {
    const s = this.state;
    if (!s) return;
    if (s.focus.kind === "critique") {
      const box = this.steps[s.focus.step]?.focusTarget(s);
      box?.focus({ preventScroll: true });
      if (scroll) box?.scrollIntoView({ block: "nearest", behavior: "instant" as ScrollBehavior });
      return;
    }
    const cur = currentIndex(s);
    if (cur === null) {
      this.submitButton.focus({ preventScroll: true });
      if (scroll) this.steps[this.steps.length - 1]?.li.scrollIntoView({ block: "nearest" });
      return;
    }
    const target = this.steps[cur].focusTarget(s);
    target.focus({ preventScroll: true });
    if (scroll) target.scrollIntoView({ block: "nearest", behavior: "instant" as ScrollBehavior });
  }

  // ------------------------------------------------------------------------------------------
  // Actions
  // ------------------------------------------------------------------------------------------

  /** Apply a state transition; save and re-render when something changed. `scroll: false`: focus
   * goes back to the step being rated without scrolling there (a Flag pressed on an earlier step:
   * the page jumped away from it and the flag just set went out of sight). */
  private act(fn: (s: LabelingState) => LabelingState, save = true, scroll = true): LabelingState | null {
    if (!this.state || this.session.submitting) return this.state;
    const before = this.state;
    const next = fn(this.state);
    if (next === this.state) return next;
    const labelsChanged = next.labels !== this.state.labels;
    this.state = next;
    if (labelsChanged && save) this.session.persist(true);
    // Every note is about the moment it was said ("Submitted. Here is the next solution.", "Not
    // ready to submit: …", "Step 1 is rated already"): kept through later ratings it read as news
    // about them. The footer says what is left now.
    if (labelsChanged) this.say("");
    this.render();
    this.focusCurrent(scroll);
    if (labelsChanged) this.tell(before, next);
    return next;
  }

  private onKey(e: KeyboardEvent): void {
    if (this.reasonDialog.isOpen || this.shortcutsDialog.isOpen || this.confirmDialog.isOpen) {
      if (e.key === "?" && !e.repeat && this.shortcutsDialog.isOpen) {
        e.preventDefault();
        this.shortcutsDialog.toggle();
      }
      return;
    }
    if (!this.keysOn.checked || !focusInWorkspace(e.target, this.root, e.key)) return;
    if (focusTakesKey(e.target, e.key, this.submitButton)) return;
    const action = actionFor(e);
    if (action === null) return;
    if (ignoredRepeat(e, action)) {
      e.preventDefault();
      return;
    }
    if (action === "shortcuts") {
      e.preventDefault();
      this.shortcutsDialog.toggle();
      return;
    }
    if (!this.state) return;
    if (action === "focus-next" || action === "focus-prev") {
      const cur = currentIndex(this.state);
      if (cur === null || this.state.labels[cur].alternatives.length === 0) return; // plain scrolling
    }
    e.preventDefault();
    this.perform(action);
  }

  /** What each key of the key map does. */
  private perform(action: KeyAction): void {
    const rating = ratingOf(action);
    if (rating !== null) {
      const before = this.state;
      const why = before && this.act((s) => rate(s, rating)) === before ? unrateableWhy(before) : null;
      if (why) this.say(why);
      return;
    }
    switch (action) {
      case "flag":
        if (this.state && flagTarget(this.state) === null) this.say("Nothing rated yet: f flags a rating once you have given it.");
        else this.act(toggleFlag);
        return;
      case "undo":
        this.act(undo);
        return;
      case "focus-next":
      case "focus-prev":
        this.act((s) => moveFocus(s, action === "focus-next" ? 1 : -1), false);
        return;
      case "write-alternative":
      case "write-human": {
        const kind = action === "write-alternative" ? "newalt" : "human";
        if (this.state && !canAddAlternatives(this.state)) this.say(writerWhy(this.state, kind));
        else this.act((s) => focusWriter(s, kind), false);
        return;
      }
      case "write-critique":
        if (this.state && critiqueTarget(this.state) === null) this.say("Nothing rated yet: e writes a critique of the step you rated last.");
        else this.act(openCritique, false);
        return;
      case "next-step": {
        const before = this.state;
        if (before && this.act(nextStep) === before) this.say(nextStepWhy(before, this.namesKeys()));
        return;
      }
      case "submit":
        void this.submit();
        return;
      case "give-up":
        this.openReason("give_up");
        return;
      case "bad-problem":
        this.openReason("bad_problem");
        return;
      default:
        return;
    }
  }

  /** Skip: at once on an untouched solution; with work on it, only once the annotator confirms. */
  private async skip(): Promise<void> {
    const s = this.state;
    if (!s || this.session.submitting) return;
    if (hasWork(s)) {
      const n = ratedCount(s);
      const work = n === 0 ? "Your work on it" : `Your ${n === 1 ? "rating" : `${n} ratings`} and any critique on it`;
      const sure = await this.confirmDialog.ask({
        title: "Skip this solution?",
        text: `${work} will be discarded, and it is not served to you again.`,
        yes: "Skip and discard",
        keep: "Keep labeling",
      });
      if (!sure || this.state !== s) return;
    }
    await this.session.skip();
  }

  private openReason(kind: GiveUpReason): void {
    if (!this.state || this.session.submitting) return;
    this.reasonDialog.open(kind);
  }

  private async submit(giveUp?: { reason: GiveUpReason; note: string }): Promise<void> {
    const s = this.state;
    if (!s || this.session.submitting) return;
    // A critique or step typed and left with Esc is not in the labels: a submit would drop it.
    // (Text left in a box of a step since rated past is moot: that box no longer opens.)
    const typed = this.steps.flatMap((v) => Object.keys(v.typing())).filter((id) => reopens(s, id));
    if (typed.length > 0) {
      this.say(`${NOT_READY} ${unsavedText(typed[0]!)} is written but not saved: Enter in its box saves it, or empty the box.`);
      this.state = reopenTyped(s, typed);
      this.render();
      this.focusCurrent();
      return;
    }
    try {
      const payload = buildPayload(s, {
        idempotencyKey: this.session.idempotencyKey,
        totalTimeMs: this.session.timer.elapsedMs(),
        giveUp,
      });
      await this.session.submit(payload);
    } catch (e) {
      if (e instanceof IncompleteLabelingError) {
        // Enter pressed again just after a submit lands on the next, untouched solution: keep the
        // "Submitted" confirmation on screen instead of replacing it with "Not ready".
        if (this.repeat.isRepeat(!hasWork(s))) return;
        const missing = missingCritique(s);
        const critique = this.namesKeys() ? keyFor("write-critique") : "Critique"; // its key while keys act
        this.say(
          missing === null
            ? `${NOT_READY} ${e.message}.`
            : `${NOT_READY} step ${missing + 1} is Negative and this project needs a critique of it (${critique}).`,
        );
      }
      else throw e;
    }
  }

  /** The progress panel and the Not recorded box brought up to date; the answer, or null. */
  private async refreshProgress(): Promise<MyProgress | null> {
    try {
      const me = await this.api.me(this.config.project.slug);
      if (me) {
        renderProgress(this.progress, me);
        this.emptyText.textContent = emptyQueueText(me.screening);
        const failed = me.screening.status === "failed";
        this.emptyHeading.textContent = failed ? "No tasks for you in this project" : "No more solutions to label right now";
        this.checkAgain.hidden = failed;
        this.refused.show(me.refused_submits ?? []);
      }
      return me;
    } catch {
      return null; // the panel keeps its last numbers
    }
  }

  private showSaveState(text: string): void {
    this.saveState.textContent = text;
    const news = SAVE_TROUBLE.test(text) ? text : "";
    if (news !== this.saveNews.textContent) this.saveNews.textContent = news;
  }

  /** Read out what a change did; once the labeling is complete, also what comes next (the footer,
   * which is not a live region, says it for the eye). */
  private tell(before: LabelingState, after: LabelingState): void {
    let text = describeChange(before, after) ?? "";
    if (text && finishReason(before) === null && finishReason(after) !== null) {
      text += ` ${guidance(after, false, this.namesKeys())}`;
    }
    // The same words again (a rating undone and given again) are no change to the region.
    this.keyNews.textContent = text !== "" && text === this.keyNews.textContent ? `${text}\u00a0` : text;
  }

  private say(text: string): void {
    this.notice.textContent = text;
    if (text) this.keyNews.textContent = ""; // the notice is the news now, not the last change
  }

  private fail(message: string | Node): void {
    this.alert.replaceChildren(message);
    this.alert.hidden = false;
    // The alert sits under the sticky bar at the top: scrolled down to the last step, a refused
    // submit's message would be off screen (workspace.css keeps it clear of the bar).
    this.alert.scrollIntoView({ block: "nearest", behavior: "instant" as ScrollBehavior });
  }

  private hideAlert(): void {
    this.alert.hidden = true;
    this.alert.textContent = "";
  }
}

/** A writer box's kind and step from its id (stepview.ts: sl-critique-2 is step 3's critique). */
function writerBox(id: string): { kind: string; step: number } {
  const [, kind = "", index] = /^sl-(human|newalt|critique)-(\d+)$/.exec(id) ?? [];
  return { kind, step: Number(index) };
}

/** Whether the box `id` can open in state `s`: a critique on a rated step, a step of your own at the current one. */
function reopens(s: LabelingState, id: string): boolean {
  const { kind, step } = writerBox(id);
  if (kind === "critique") return s.labels[step]?.rating != null;
  return (kind === "human" || kind === "newalt") && step === currentIndex(s);
}

/** "the critique of step 2" for a writer box's id. */
function unsavedText(id: string): string {
  const { kind, step } = writerBox(id);
  if (kind === "critique") return `the critique of step ${step + 1}`;
  if (kind === "human") return `your corrected step ${step + 1}`;
  return `the new alternative at step ${step + 1}`;
}

/** The state with the first box of `typed` that can open, open and focused: the box whose unsaved
 * text a draft brought back (`restore` opens none, and text in a closed box went unseen), or the
 * one a submit would have dropped. */
function reopenTyped(s: LabelingState, typed: readonly string[]): LabelingState {
  const id = typed.find((box) => reopens(s, box));
  if (id === undefined) return s;
  const { kind, step } = writerBox(id);
  return kind === "critique" ? { ...s, focus: { kind: "critique", step } } : focusWriter(s, kind as "human" | "newalt");
}

