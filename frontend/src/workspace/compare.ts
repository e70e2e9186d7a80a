/**
 * The compare workspace: two solutions of one problem side by side (math rendered), keys from the
 * one key map (keymap.ts, scope "compare") for A / B / tie, strength and a "first wrong step" marker
 * on either side. Work is kept by the same draft keeper as step labels (autosave.ts): every change
 * is saved to this browser and, a moment later (at once when the tab is hidden or closed), as the
 * assignment's draft on the server, the newer of the two resumed by revision with the idempotency
 * key; heartbeats keep the lease; the bar says where the work is. Backspace undoes; a submit is
 * retried with the same key until the server answers.
 */
import type { TaskOut } from "../api/types";
import type { TaskStep } from "../labeling/state";
import { renderAnswer, renderMarkdown, renderStep } from "../render/markdown";
import { h, setRendered } from "../shared/dom";
import { errorMessage } from "../shared/http";
import { loggedOut, loggedOutMessage } from "../shared/login";
import { Api, submitUntilAcknowledged, type TaskKind } from "./api";
import { DraftSync, watchPage } from "./autosave";
import { ConfirmDialog, keyHints, ShortcutsDialog } from "./dialogs";
import { compareDrafts } from "./draft";
import {
  actionFor,
  bindingsFor,
  focusInWorkspace,
  focusTakesKey,
  ignoredRepeat,
  type KeyAction,
  keyFor,
  keysNamed,
  onTouchScreenChange,
  setSingleKeys,
  singleKeysOn,
} from "./keymap";
import { renderPairProgress } from "./progress";
import { RepeatedSubmitGuard } from "./repeat";
import type { WorkspaceConfig } from "./app";

type Side = "A" | "B";
type Strength = 1 | 2 | 3;
export interface CompareChoice {
  preference: Side | "tie" | null;
  /** By how much A or B is better: the annotator's choice, never a default (null until made;
   * a tie has none). */
  strength: Strength | null;
  firstWrong: Record<Side, number | null>;
}
/** What a compare draft saves beside the key, revision and clock (draft.ts). */
interface CompareFields {
  choice: CompareChoice;
}
interface Candidate {
  solution_id: number;
  steps: TaskStep[];
}

type KindViews = typeof import("./stepbody");
/** Code and trace rendering with its highlighter: a chunk of its own, fetched for the first such
 * pair (as the step workspace does), so math pairs never load it. */
let kindViews: Promise<KindViews | null> | null = null;
function loadKindViews(): Promise<KindViews | null> {
  kindViews ??= import("./stepbody").catch(() => null);
  return kindViews;
}

/** What the pair's solutions are: code pairs carry their language, trace steps their type. */
export function pairKind(task: Pick<TaskOut, "language" | "candidates">): TaskKind {
  if (task.language) return "code";
  return (task.candidates ?? []).some((c) => c.steps.some((s) => s.type)) ? "trace" : "math";
}

const fresh = (): CompareChoice => ({ preference: null, strength: null, firstWrong: { A: null, B: null } });
const STRENGTHS = ["Slightly", "Clearly", "Much"] as const;

/** What stops a submit ("choose …" prompt), or null when the choice is complete. `keys`: whether
 * the single-key shortcuts are on; off, the prompt names no key (they do nothing). */
export function missingChoice(c: CompareChoice, keys = true): string | null {
  if (c.preference === null) return keys ? "Choose A, B or tie first (← / a, → / b, t)." : "Choose A, B or tie first.";
  if (c.preference !== "tie" && c.strength === null) {
    return `Choose by how much ${c.preference} is better: ${keys ? "1 slightly, 2 clearly, 3 much" : "slightly, clearly or much"}.`;
  }
  return null;
}

/** The line under the choice buttons: what is chosen, or what to choose (with its keys while they act). */
export function verdictText(c: CompareChoice, keys = true): string {
  const p = c.preference;
  if (p === null) return keys ? "Which is better? ← / a, → / b, t for a tie" : "Which is better? A, B or a tie";
  if (p === "tie") return "Tie";
  if (c.strength === null) {
    return `${p} is better: by how much? ${keys ? "1 slightly, 2 clearly, 3 much" : "slightly, clearly or much"}`;
  }
  return `${p} is ${STRENGTHS[c.strength - 1].toLowerCase()} better`;
}

/** Save states a screen reader is told of (as on the step page): the work not (yet) on the server.
 * "Saving…" and "Saved" on every choice are not read out. */
const TIE_HAS_NO_STRENGTH = "Tie: a tie has no strength. Choose A or B to say by how much.";
const SAVE_TROUBLE = /offline|retry|logged out|failed|in this browser/i;

/** A choice with a new preference: a tie has no strength (it was kept, hidden, and sent). */
export function prefer(c: CompareChoice, preference: Side | "tie"): CompareChoice {
  return { ...c, preference, strength: preference === "tie" ? null : c.strength };
}

/** A strength key (1/2/3). A tie takes none: one pressed then was kept out of sight and came back
 * with A or B, a strength the annotator never chose for it. */
export function withStrength(c: CompareChoice, strength: Strength): CompareChoice {
  return c.preference === "tie" ? c : { ...c, strength };
}

/** The submit body's answer: a tie sends no strength. */
export function answerOf(c: CompareChoice): { preference: Side | "tie"; strength?: Strength } | null {
  if (missingChoice(c) !== null || c.preference === null) return null;
  return c.preference === "tie" ? { preference: "tie" } : { preference: c.preference, strength: c.strength! };
}

/** A draft saved before compare drafts had revisions ({key, choice, elapsedMs}) reads as the
 * oldest revision: its key and choice are kept, and any newer draft wins over it. */
export function upgradeDraft(d: unknown): unknown {
  if (!d || typeof d !== "object" || "v" in d) return d;
  const old = d as { key?: unknown; choice?: unknown; elapsedMs?: unknown };
  if (typeof old.key !== "string" || !old.choice) return d;
  return { v: 1, rev: 0, saved_at: "", key: old.key, elapsed_ms: Number(old.elapsedMs) || 0, choice: old.choice };
}

/** A choice in words, as the annotator saw the pair ("B is clearly better · first wrong step: A
 * step 2"); null when nothing is chosen or marked. */
export function describeChoice(c: CompareChoice | null | undefined): string | null {
  if (!c) return null;
  const parts: string[] = [];
  if (c.preference === "tie") parts.push("Tie");
  else if (c.preference !== null && c.preference !== undefined) {
    parts.push(c.strength ? `${c.preference} is ${STRENGTHS[c.strength - 1].toLowerCase()} better` : `${c.preference} is better`);
  }
  for (const side of ["A", "B"] as const) {
    const mark = c.firstWrong?.[side];
    if (typeof mark === "number") parts.push(`first wrong step: ${side} step ${mark + 1}`);
  }
  return parts.length ? parts.join(" · ") : null;
}

/** A draft's choice that was never submitted, for the note when the claim on its pair was lost:
 * "your choice on it was not recorded (A is clearly better)"; null when it holds none. */
export function choiceNotRecorded(c: CompareChoice | null | undefined): string | null {
  const words = describeChoice(c);
  return words === null ? null : `your choice on it was not recorded (${words})`;
}

/** The next marker position: down one step, and past the last back to none. `rated` (per step,
 * default all): a step shown but not rated (a trace's observation) is stepped over, since it
 * cannot be the first wrong step. */
export function nextMarker(current: number | null, nSteps: number, rated?: readonly boolean[]): number | null {
  for (let i = current === null ? 0 : current + 1; i < nSteps; i++) {
    if (rated?.[i] !== false) return i;
  }
  return null;
}

export class CompareWorkspace {
  private readonly api: Api;
  private task: TaskOut | null = null;
  private choice: CompareChoice = fresh();
  private history: CompareChoice[] = [];
  // a phone or a mouse has no Backspace: the step screen has the same button
  private readonly undoButton = h(
    "button",
    { type: "button", class: "sl-btn", "aria-keyshortcuts": "Backspace", onclick: () => this.undo() },
    "Undo",
  );
  private readonly sync: DraftSync<CompareFields>;
  private submitting = false;
  private submitted = 0;
  /** As in the step workspace: an Enter on the pair just shown, untouched, repeats the last submit. */
  private readonly repeat = new RepeatedSubmitGuard();
  /** Where the work is ("Saving…", "Saved"): shown, not read out on every choice. */
  private readonly status = h("p", { class: "sl-save" });
  /** What a screen reader hears of it: a failed or local-only save, once. */
  private readonly saveNews = h("span", { class: "sl-sr-only", role: "status" });
  /** The Keys panel's switch for the single-key shortcuts (shared with the step page, remembered). */
  private readonly keysOn = h("input", { type: "checkbox", checked: singleKeysOn() });
  private readonly keyList = keyHints(bindingsFor("compare"));
  /** Where keyboard focus goes when a pair is shown and focus is nowhere: keys act from inside the page. */
  private readonly problemHeading = h("h2", { tabindex: -1, class: "sl-focus-quiet" }, "Problem");
  private readonly alert = h("div", { class: "sl-alert", role: "alert", hidden: true });
  private readonly problem = h("div", { class: "sl-md sl-problem-text" });
  /** As in the step workspace: the answer to judge the candidates against, when the project shows it. */
  private readonly groundTruth = h("p", { class: "sl-gt", hidden: true });
  /** A code pair's tests (the specification's examples), shown once above both candidates. */
  private readonly tests = h("div", { class: "sl-tests", hidden: true });
  private views: KindViews | null = null;
  private viewsTried = false;
  private readonly columns = h("div", { class: "sl-compare" });
  private readonly verdict = h("p", { class: "sl-compare-verdict", "aria-live": "polite" });
  /** The verdict again in the sticky bar: the line under the pair is off screen on a long pair,
   * so a key's choice shows where the annotator is reading (read out once, by the verdict). */
  private readonly barChoice = h("p", { class: "sl-bar-choice", "aria-hidden": "true" });
  /** Buttons for what the keys do (which is better, by how much), for a mouse or a touch screen. */
  private readonly choices = h("div", { class: "sl-compare-choices" });
  private readonly submitButton = h(
    "button",
    { type: "button", class: "sl-btn sl-primary", onclick: () => void this.submit() },
    "Submit (Enter)",
  );
  private readonly empty = h(
    "div",
    { class: "sl-empty", hidden: true },
    h("h2", {}, "No more pairs to compare right now"),
    h("p", {}, "Everything available to you is done or taken."),
  );
  private readonly taskArea: HTMLElement;
  private readonly shortcuts = new ShortcutsDialog(bindingsFor("compare"));
  private readonly confirmSkip = new ConfirmDialog();
  /** "Your progress today", as the step page's side panel has it (GET /projects/{slug}/me/). */
  private readonly progress = h("dl", { class: "sl-progress" });

  constructor(
    private readonly root: HTMLElement,
    private readonly config: WorkspaceConfig,
  ) {
    this.api = new Api(config.api_base, config.csrf_token);
    this.sync = new DraftSync<CompareFields>(
      this.api,
      {
        fields: () => ({ choice: this.choice }),
        status: (text) => this.showStatus(text),
        say: (text) => this.showStatus(text),
        fail: (message) => this.fail(message),
        loadNext: () => this.load(),
        busy: () => this.submitting,
        // named, not dropped, when the pair turns out answered elsewhere or its claim was lost
        // (a tab closed mid-pair whose lease ran out and went to another annotator)
        describeWork: () => describeChoice(this.choice),
        leftBehind: (draft) => choiceNotRecorded(draft.choice),
      },
      compareDrafts,
      "pair",
      config.project.slug,
    );
    this.taskArea = h(
      "div",
      { class: "sl-task" },
      this.problemHeading,
      this.problem,
      this.groundTruth,
      this.tests,
      this.columns,
      this.choices,
      this.verdict,
      h(
        "div",
        { class: "sl-compare-actions" },
        this.submitButton,
        this.undoButton,
        h("button", { type: "button", class: "sl-btn", onclick: () => void this.skip() }, "Skip this pair"),
      ),
    );
  }

  start(): void {
    this.root.classList.add("sl-compare-root");
    this.keysOn.addEventListener("change", () => {
      setSingleKeys(this.keysOn.checked);
      this.showKeys();
    });
    this.showKeys();
    onTouchScreenChange(() => this.showKeys());
    // the page's h1, as on the step page: its h2s (Problem, Guidelines, Keys) sit under it
    const bar = h(
      "div",
      { class: "sl-bar" },
      h("h1", { class: "sl-compare-title" }, this.config.project.name || this.config.project.slug),
      this.barChoice,
      this.status,
      this.saveNews,
    );
    // As on the step page: what a key scrolls to (a marked step) keeps clear of the sticky bar,
    // whose height workspace.css reads from --sl-bar-h (it wraps to more rows on a phone).
    new ResizeObserver(() =>
      document.documentElement.style.setProperty("--sl-bar-h", `${Math.ceil(bar.offsetHeight)}px`),
    ).observe(bar);
    this.root.replaceChildren(
      h(
        "div",
        { class: "sl-compare-page" },
        bar,
        this.alert,
        this.taskArea,
        this.empty,
        // As on the step page: a named scroll box, reached by Tab, its headings under the h2 (# is an h3).
        h(
          "details",
          { class: "sl-compare-guidelines" },
          h("summary", {}, h("h2", { id: "sl-guide-h" }, "Guidelines")),
          setRendered(
            h("div", { class: "sl-md sl-guidelines", role: "region", "aria-labelledby": "sl-guide-h", tabindex: 0 }),
            this.config.project.guidelines.trim()
              ? renderMarkdown(this.config.project.guidelines, { headingLevel: 3 })
              : "<p>No guidelines yet.</p>",
          ),
        ),
        h(
          "section",
          { class: "sl-compare-progress", "aria-labelledby": "sl-today-h" },
          h("h2", { id: "sl-today-h" }, "Your progress today"),
          this.progress,
        ),
        // sl-keys-hint: hidden on a phone, as on the step screen
        h(
          "section",
          { class: "sl-keys-hint", "aria-labelledby": "sl-keyhint-h" },
          h("h2", { id: "sl-keyhint-h" }, "Keys"),
          h("label", { class: "sl-keys-switch" }, this.keysOn, " Single-key shortcuts"),
          this.keyList,
        ),
      ),
      this.shortcuts.el,
      this.confirmSkip.el,
    );
    document.addEventListener("keydown", (e) => this.onKey(e));
    watchPage(this.sync);
    window.setInterval(() => void this.sync.heartbeat(), this.config.heartbeat_ms ?? 60_000);
    void this.load();
  }

  private async refreshProgress(): Promise<void> {
    const me = await this.api.me(this.config.project.slug).catch(() => null);
    if (me) renderPairProgress(this.progress, me); // else the panel keeps its last numbers
  }

  private async load(): Promise<void> {
    const url = `projects/${encodeURIComponent(this.config.project.slug)}/tasks/next/`;
    const r = await this.api.request<TaskOut>("GET", url).catch(() => null);
    if (!r) return this.fail("The server could not be reached. Reload the page to try again.");
    if (r.status === 204) return this.show(null);
    if (r.status !== 200 || !r.data) return this.fail(errorMessage(r.status, r.data));
    this.show(r.data);
  }

  private show(task: TaskOut | null): void {
    if (task && pairKind(task) !== "math" && !this.viewsTried) {
      // code and traces draw with a chunk of their own; shown as plain text if it cannot load
      void loadKindViews().then((views) => {
        this.views = views;
        this.viewsTried = true;
        this.show(task);
      });
      return;
    }
    // a new pair after a submit or skip (pressed under a long pair) starts at its top, not where
    // the last one was left: the problem, then both solutions from their first step
    const newPair = this.task !== null && task !== null && task.assignment_id !== this.task.assignment_id;
    this.task = task;
    void this.refreshProgress(); // a pair answered (or the first one shown): the counts move
    this.taskArea.hidden = task === null;
    this.empty.hidden = task !== null;
    const saved = this.sync.begin(task?.assignment_id ?? null, upgradeDraft(task?.draft ?? null));
    if (!task) {
      this.barChoice.textContent = ""; // the bar stays: no choice of a pair gone is left in it
      return;
    }
    this.choice = saved?.choice ?? fresh();
    this.history = [];
    this.repeat.shown();
    setRendered(this.problem, renderMarkdown(task.problem.text, { headingLevel: 3 }));
    const gta = task.problem.ground_truth_answer?.trim();
    this.groundTruth.hidden = !(this.config.project.show_ground_truth && gta);
    this.groundTruth.replaceChildren(
      ...(gta
        ? [h("strong", {}, "Ground-truth answer: "), setRendered(h("span", { class: "sl-md" }), renderAnswer(gta))]
        : []),
    );
    const views = pairKind(task) === "math" ? null : this.views;
    const tests = task.tests && views ? views.testsBlock(task.tests, task.language ?? "") : null;
    this.tests.hidden = tests === null;
    this.tests.replaceChildren(...(tests ? [tests] : []));
    this.render();
    // keys act with focus in the page (focusInWorkspace): a pair shown with focus nowhere takes it
    const active = document.activeElement;
    if (!active || active === document.body) this.problemHeading.focus({ preventScroll: true });
    if (newPair) this.taskArea.scrollIntoView({ block: "start", behavior: "instant" as ScrollBehavior });
    this.sync.started(saved, this.untouched());
    if (saved && !this.untouched()) this.showStatus("Resumed your saved work");
  }

  private candidates(): Candidate[] {
    return (this.task?.candidates ?? []) as Candidate[];
  }

  /** The single-key shortcuts on or off: the key list, badges, and the texts that name keys follow. */
  private showKeys(): void {
    const on = this.keysOn.checked;
    const named = keysNamed(on); // not on a touch screen (keymap.ts)
    this.keyList.hidden = !on;
    this.root.classList.toggle("sl-keys-off", !named); // no key badges on the buttons
    this.submitButton.textContent = named ? "Submit (Enter)" : "Submit";
    if (on) this.undoButton.setAttribute("aria-keyshortcuts", "Backspace");
    else this.undoButton.removeAttribute("aria-keyshortcuts");
    if (this.task) this.render();
  }

  private showStatus(text: string): void {
    this.status.textContent = text;
    const news = SAVE_TROUBLE.test(text) ? text : "";
    if (news !== this.saveNews.textContent) this.saveNews.textContent = news;
  }

  private render(): void {
    // a button pressed is drawn anew: focus goes to its successor, not to the page body (where
    // Enter does not submit and a screen reader loses its place)
    const focused = document.activeElement;
    const refocus =
      focused instanceof HTMLElement && (this.columns.contains(focused) || this.choices.contains(focused))
        ? focused.dataset.focusKey
        : undefined;
    const keys = this.keysOn.checked; // the keys act (aria-keyshortcuts)
    const named = keysNamed(keys); // and texts name them
    this.undoButton.disabled = this.history.length === 0;
    // Not ready: looks it, but stays pressable, to say what is still missing
    this.submitButton.classList.toggle("sl-not-ready", answerOf(this.choice) === null);
    const sides: Side[] = ["A", "B"];
    const kind = this.task ? pairKind(this.task) : "math";
    const views = kind === "math" ? null : this.views;
    const display = { kind, language: this.task?.language ?? "" };
    this.columns.replaceChildren(
      ...this.candidates().map((c, i) => {
        const side = sides[i];
        // code: numbered, highlighted lines; traces: each step's type, tool calls as code
        const parts = views?.stepParts(c.steps, display);
        const wrong = this.choice.firstWrong[side];
        const chosen = this.choice.preference === side;
        return h(
          "section",
          { class: `sl-candidate${chosen ? " sl-chosen" : ""}`, "data-side": side, "aria-label": `Solution ${side}` },
          h("h3", {}, `${side}${chosen ? " (better)" : ""}`),
          h(
            "ol",
            { class: "sl-steps" },
            ...c.steps.map((s, j) => {
              const li = h("li", {
                class: `sl-step${wrong === s.index ? " sl-first-wrong" : ""}`,
                "data-index": String(s.index),
              });
              const part = parts?.[j];
              // numbered as on the step page: "the first wrong step is B's step 3" is said and found
              const number = h("span", { class: "sl-step-n" }, `Step ${s.index + 1}`);
              li.append(h("div", { class: "sl-step-head" }, number, part?.badge));
              li.append(part?.body ?? setRendered(h("div", { class: "sl-md" }), renderStep(s.text)));
              if (wrong === s.index) li.append(h("p", { class: "sl-wrong-mark" }, "First wrong step"));
              // a step shown but not rated (a trace's observation) cannot be the first wrong one
              if (s.rated === false) return li;
              // the marker's key moves it one step at a time; a click puts it here (again: none)
              const mark = h(
                "button",
                {
                  type: "button",
                  class: "sl-btn sl-small sl-mark-wrong",
                  "aria-pressed": wrong === s.index ? "true" : "false",
                  // the name holds the words shown (WCAG 2.5.3: a speech user says "Unmark")
                  "aria-label":
                    wrong === s.index
                      ? `Unmark ${side}: step ${s.index + 1} as the first wrong step`
                      : `${side}: step ${s.index + 1} is the first wrong step`,
                  "data-focus-key": `mark-${side}-${s.index}`,
                  onclick: () =>
                    this.change((ch) => ({
                      ...ch,
                      firstWrong: { ...ch.firstWrong, [side]: ch.firstWrong[side] === s.index ? null : s.index },
                    })),
                },
                wrong === s.index ? "Unmark" : "First wrong step?",
              );
              li.append(mark);
              return li;
            }),
          ),
        );
      }),
    );
    const p = this.choice.preference;
    const strength = this.choice.strength;
    const button = (label: string, action: KeyAction, on: boolean, update: (c: CompareChoice) => CompareChoice) =>
      h(
        "button",
        {
          type: "button",
          class: "sl-rate sl-choice",
          "aria-pressed": on ? "true" : "false",
          "aria-keyshortcuts": keys ? keyFor(action).split(" / ").pop() : undefined,
          "data-focus-key": action,
          onclick: () => this.change(update),
        },
        label,
        h("kbd", {}, keyFor(action)),
      );
    this.choices.replaceChildren(
      h(
        "div",
        { class: "sl-rate-group", role: "group", "aria-label": "Which is better" },
        button("A is better", "prefer-a", p === "A", (c) => prefer(c, "A")),
        button("Tie", "prefer-tie", p === "tie", (c) => prefer(c, "tie")),
        button("B is better", "prefer-b", p === "B", (c) => prefer(c, "B")),
      ),
      h(
        "div",
        { class: "sl-rate-group", role: "group", "aria-label": "By how much", hidden: p === "tie" },
        ...([1, 2, 3] as const).map((n) =>
          button(STRENGTHS[n - 1], `strength-${n}`, strength === n, (c) => ({ ...c, strength: n })),
        ),
      ),
    );
    this.verdict.textContent = verdictText(this.choice, named);
    this.barChoice.textContent = this.choice.preference === null ? "" : this.verdict.textContent;
    if (refocus) this.root.querySelector<HTMLElement>(`[data-focus-key="${refocus}"]`)?.focus({ preventScroll: true });
  }

  private change(update: (c: CompareChoice) => CompareChoice): void {
    const before = structuredClone(this.choice);
    const next = update(before);
    if (next === before) return; // a key that changes nothing (a strength during a tie) is no step to undo
    this.alert.hidden = true; // a "choose first" or refusal no longer describes the choice now
    this.history.push(this.choice);
    this.choice = next;
    this.render();
    this.sync.persist(true);
  }

  private onKey(e: KeyboardEvent): void {
    if (this.confirmSkip.isOpen) return;
    if (this.shortcuts.isOpen) {
      // a modal list: keys tried while reading it changed the pair unseen behind it (as on the
      // step page, only ? acts there: it closes the list)
      if (e.key === "?" && !e.repeat) {
        e.preventDefault();
        this.shortcuts.toggle();
      }
      return;
    }
    // as on the step page: off by the Keys panel's switch, and only with focus in the page (a
    // site header link keeps its keys)
    if (!this.keysOn.checked || !focusInWorkspace(e.target, this.root, e.key)) return;
    if (focusTakesKey(e.target, e.key, this.submitButton)) return;
    const action = actionFor(e, "compare");
    if (!action) return;
    e.preventDefault();
    if (ignoredRepeat(e, action)) return;
    if (action === "shortcuts") return this.shortcuts.toggle();
    if (!this.task || this.submitting) return;
    const n = this.candidates().map((c) => c.steps.length);
    const rated = this.candidates().map((c) => c.steps.map((s) => s.rated !== false));
    switch (action) {
      case "prefer-a":
      case "prefer-b":
      case "prefer-tie": {
        const preference = action === "prefer-a" ? "A" : action === "prefer-b" ? "B" : "tie";
        return this.change((c) => prefer(c, preference));
      }
      case "strength-1":
      case "strength-2":
      case "strength-3": {
        const strength = Number(action.slice(-1)) as Strength;
        if (this.choice.preference === "tie") {
          // a tie has no strength: the key did nothing, and said nothing (annotator walkthrough)
          this.verdict.textContent = TIE_HAS_NO_STRENGTH;
          return;
        }
        return this.change((c) => withStrength(c, strength));
      }
      case "mark-wrong-a":
        this.change((c) => ({ ...c, firstWrong: { ...c.firstWrong, A: nextMarker(c.firstWrong.A, n[0], rated[0]) } }));
        return this.showMarker("A");
      case "mark-wrong-b":
        this.change((c) => ({ ...c, firstWrong: { ...c.firstWrong, B: nextMarker(c.firstWrong.B, n[1], rated[1]) } }));
        return this.showMarker("B");
      case "undo":
        return this.undo();
      case "submit":
        return void this.submit(true);
      default:
        return;
    }
  }

  /** After q / p: the step the marker moved to is scrolled into view (the keys move it down a
   * long solution, past the screen's end); past the last step (no marker), the side's heading. */
  private showMarker(side: Side): void {
    const column = this.columns.querySelector<HTMLElement>(`[data-side="${side}"]`);
    const target = column?.querySelector<HTMLElement>(".sl-first-wrong") ?? column?.querySelector<HTMLElement>("h3");
    target?.scrollIntoView({ block: "nearest", behavior: "instant" as ScrollBehavior });
  }

  /** Back to the choice before the last change (Backspace, or the Undo button on a phone). */
  private undo(): void {
    if (this.submitting) return;
    const previous = this.history.pop();
    if (!previous) return;
    this.alert.hidden = true; // as for a change: the alert described the choice undone
    this.choice = previous;
    this.render();
    this.sync.persist(true);
  }

  /** `byKey`: sent by Enter, which may be the last submit's key again (a click or a tap is meant). */
  private async submit(byKey = false): Promise<void> {
    const task = this.task;
    if (!task || this.submitting) return;
    const answer = answerOf(this.choice);
    if (answer === null) {
      // the "Submitted" note stays: nothing was chosen on this pair yet, so there is nothing to fix
      if (byKey && this.repeat.isRepeat(this.untouched())) return;
      return this.fail(missingChoice(this.choice, keysNamed(this.keysOn.checked)) ?? "");
    }
    this.submitting = true;
    this.sync.cancel(); // a draft saved after the submit would be refused (409): the submit carries it
    const body = {
      idempotency_key: this.sync.idempotencyKey,
      ...answer,
      total_time_ms: Math.round(this.sync.timer.elapsedMs()),
      first_wrong: this.choice.firstWrong,
    };
    const outcome = await submitUntilAcknowledged(() => this.api.request("POST", `assignments/${task.assignment_id}/submit/`, body), {
      onRetry: (attempt, why) => this.showStatus(`Submitting (retry ${attempt}: ${why})`),
    });
    this.submitting = false;
    if (this.task !== task) return;
    if (!outcome.ok) {
      if (outcome.status === 404 || outcome.status === 409) {
        // submitted or skipped already, taken, or not ours: the next pair instead of a dead end
        return this.sync.moveOn(`Not submitted: ${refusedReason(outcome.message)}`, true);
      }
      this.resave();
      if (loggedOut(outcome.status, outcome.data)) {
        // kept in this browser: after logging in again this page (or a reload) sends it again
        return this.fail(loggedOutMessage("Not submitted. ", "Your choice is kept in this browser: submit again once you are back."));
      }
      return this.fail(`Not submitted: ${outcome.message}`);
    }
    this.sync.clear();
    this.alert.hidden = true;
    const next = (outcome.data as { next?: TaskOut | null } | null)?.next ?? null;
    this.show(next);
    this.showStatus(`Submitted (${++this.submitted} this session)`);
  }

  /** Release the pair without an answer: it is never served to this annotator again. */
  private async skip(): Promise<void> {
    const task = this.task;
    if (!task || this.submitting) return;
    if (!this.untouched()) {
      const sure = await this.confirmSkip.ask({
        title: "Skip this pair?",
        text: "Your choice on this pair will be discarded, and it is not served to you again.",
        yes: "Skip and discard",
        keep: "Keep comparing",
      });
      if (!sure || this.task !== task) return;
    }
    this.submitting = true;
    this.sync.cancel();
    const r = await this.api.skip(task.assignment_id).catch(() => null);
    this.submitting = false;
    if (this.task !== task) return;
    if (!r || r.status !== 200) {
      this.resave();
      return this.fail(
        r ? `Not skipped: ${errorMessage(r.status, r.data)}` : "Not skipped: the server could not be reached. Try again.",
      );
    }
    this.sync.clear();
    this.alert.hidden = true;
    this.show((r.data as { next?: TaskOut | null } | null)?.next ?? null);
    this.showStatus("Skipped.");
  }

  /** After a submit or skip not done: the server save it cancelled goes now, and the bar says
   * where the work is (flush reports its answer: offline, logged out, …). */
  private resave(): void {
    this.showStatus(this.sync.gone ? "Saved in this browser" : this.sync.serverSaved ? "Saved" : "Saving…");
    this.sync.flush(false);
  }

  /** Nothing chosen or marked on this pair yet. */
  private untouched(): boolean {
    return JSON.stringify(this.choice) === JSON.stringify(fresh());
  }

  private fail(message: string | Node): void {
    this.alert.replaceChildren(message);
    this.alert.hidden = false;
    this.alert.scrollIntoView({ block: "nearest", behavior: "instant" as ScrollBehavior }); // clear of the sticky bar (workspace.css)
  }
}

/** A refused answer's reason as this page says it: the API's first sentence. The rest tells API
 * clients where the answer is kept (refused_submits), which this page has no list for. */
export function refusedReason(message: string): string {
  const end = message.indexOf(". ");
  return end < 0 ? message : message.slice(0, end + 1);
}
