/**
 * The compare workspace: two solutions of one problem side by side (math rendered), keys from the
 * one key map (keymap.ts, scope "compare") for A / B / tie, strength and a "first wrong step" marker
 * on either side. Work is kept like step labels: every change is saved to this browser and, a
 * moment later, as the assignment's draft on the server (restored on reload, with the idempotency
 * key); heartbeats keep the lease; Backspace undoes; a submit is retried with the same key until
 * the server answers.
 */
import type { TaskOut } from "../api/types";
import { renderAnswer, renderMarkdown, renderStep } from "../render/markdown";
import { h, setRendered } from "../shared/dom";
import { errorMessage } from "../shared/http";
import { loggedOut, loggedOutMessage } from "../shared/login";
import { Api, newIdempotencyKey, submitUntilAcknowledged } from "./api";
import { ConfirmDialog, keyHints, ShortcutsDialog } from "./dialogs";
import { actionFor, bindingsFor, focusTakesKey, ignoredRepeat, type KeyAction, keyFor } from "./keymap";
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
interface CompareDraft {
  key: string;
  choice: CompareChoice;
  elapsedMs: number;
}
interface Candidate {
  solution_id: number;
  steps: { index: number; text: string }[];
}

const DRAFT_DEBOUNCE_MS = 1_500;
const fresh = (): CompareChoice => ({ preference: null, strength: null, firstWrong: { A: null, B: null } });
const STRENGTHS = ["Slightly", "Clearly", "Much"] as const;

/** What stops a submit ("choose …" prompt), or null when the choice is complete. */
export function missingChoice(c: CompareChoice): string | null {
  if (c.preference === null) return "Choose A, B or tie first (← / a, → / b, t).";
  if (c.preference !== "tie" && c.strength === null) {
    return `Choose by how much ${c.preference} is better: 1 slightly, 2 clearly, 3 much.`;
  }
  return null;
}

/** A choice with a new preference: a tie has no strength (it was kept, hidden, and sent). */
export function prefer(c: CompareChoice, preference: Side | "tie"): CompareChoice {
  return { ...c, preference, strength: preference === "tie" ? null : c.strength };
}

/** The submit body's answer: a tie sends no strength. */
export function answerOf(c: CompareChoice): { preference: Side | "tie"; strength?: Strength } | null {
  if (missingChoice(c) !== null || c.preference === null) return null;
  return c.preference === "tie" ? { preference: "tie" } : { preference: c.preference, strength: c.strength! };
}
const localKey = (id: number) => `steplabel.compare.${id}`;

/** The next marker position: down one step, and past the last back to none. */
export function nextMarker(current: number | null, nSteps: number): number | null {
  if (current === null) return nSteps > 0 ? 0 : null;
  return current + 1 < nSteps ? current + 1 : null;
}

export class CompareWorkspace {
  private readonly api: Api;
  private task: TaskOut | null = null;
  private choice: CompareChoice = fresh();
  private history: CompareChoice[] = [];
  private key = "";
  private startedAt = Date.now();
  private elapsedBefore = 0;
  private draftTimer: number | undefined;
  private submitting = false;
  private submitted = 0;
  /** As in the step workspace: an Enter on the pair just shown, untouched, repeats the last submit. */
  private readonly repeat = new RepeatedSubmitGuard();
  private readonly status = h("p", { class: "sl-save", "aria-live": "polite" });
  private readonly alert = h("div", { class: "sl-alert", role: "alert", hidden: true });
  private readonly problem = h("div", { class: "sl-md sl-problem-text" });
  /** As in the step workspace: the answer to judge the candidates against, when the project shows it. */
  private readonly groundTruth = h("p", { class: "sl-gt", hidden: true });
  private readonly columns = h("div", { class: "sl-compare" });
  private readonly verdict = h("p", { class: "sl-compare-verdict", "aria-live": "polite" });
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

  constructor(
    private readonly root: HTMLElement,
    private readonly config: WorkspaceConfig,
  ) {
    this.api = new Api(config.api_base, config.csrf_token);
    this.taskArea = h(
      "div",
      { class: "sl-task" },
      h("h2", {}, "Problem"),
      this.problem,
      this.groundTruth,
      this.columns,
      this.choices,
      this.verdict,
      h(
        "div",
        { class: "sl-compare-actions" },
        this.submitButton,
        h("button", { type: "button", class: "sl-btn", onclick: () => void this.skip() }, "Skip this pair"),
      ),
    );
  }

  start(): void {
    this.root.classList.add("sl-compare-root");
    this.root.replaceChildren(
      h(
        "div",
        { class: "sl-compare-page" },
        h("div", { class: "sl-bar" }, h("strong", {}, this.config.project.name), this.status),
        this.alert,
        this.taskArea,
        this.empty,
        h(
          "details",
          { class: "sl-compare-guidelines" },
          h("summary", {}, "Guidelines"),
          setRendered(
            h("div", { class: "sl-md sl-guidelines" }),
            this.config.project.guidelines.trim()
              ? renderMarkdown(this.config.project.guidelines)
              : "<p>No guidelines yet.</p>",
          ),
        ),
        h("section", {}, h("h2", {}, "Keys"), keyHints(bindingsFor("compare"))),
      ),
      this.shortcuts.el,
      this.confirmSkip.el,
    );
    document.addEventListener("keydown", (e) => this.onKey(e));
    window.setInterval(() => void this.beat(), this.config.heartbeat_ms ?? 60_000);
    void this.load();
  }

  private async load(): Promise<void> {
    const r = await this.api.request<TaskOut>("GET", `projects/${encodeURIComponent(this.config.project.slug)}/tasks/next/`);
    if (r.status === 204) return this.show(null);
    if (r.status !== 200 || !r.data) return this.fail(errorMessage(r.status, r.data));
    this.show(r.data);
  }

  private show(task: TaskOut | null): void {
    this.task = task;
    this.taskArea.hidden = task === null;
    this.empty.hidden = task !== null;
    if (!task) return;
    const saved = this.restore(task);
    this.key = saved?.key ?? newIdempotencyKey();
    this.choice = saved?.choice ?? fresh();
    this.elapsedBefore = saved?.elapsedMs ?? 0;
    this.startedAt = Date.now();
    this.history = [];
    this.repeat.shown();
    this.status.textContent = saved ? "Resumed your saved work" : "";
    setRendered(this.problem, renderMarkdown(task.problem.text));
    const gta = task.problem.ground_truth_answer?.trim();
    this.groundTruth.hidden = !(this.config.project.show_ground_truth && gta);
    this.groundTruth.replaceChildren(
      ...(gta
        ? [h("strong", {}, "Ground-truth answer: "), setRendered(h("span", { class: "sl-md" }), renderAnswer(gta))]
        : []),
    );
    this.render();
  }

  /** The newer of this browser's copy and the server's draft. */
  private restore(task: TaskOut): CompareDraft | null {
    const local = localStorage.getItem(localKey(task.assignment_id));
    const candidates = [task.draft, local ? JSON.parse(local) : null].filter(
      (d): d is CompareDraft => !!d && typeof d === "object" && "key" in d && "choice" in d,
    );
    return candidates.sort((a, b) => b.elapsedMs - a.elapsedMs)[0] ?? null;
  }

  private candidates(): Candidate[] {
    return (this.task?.candidates ?? []) as Candidate[];
  }

  private render(): void {
    const sides: Side[] = ["A", "B"];
    this.columns.replaceChildren(
      ...this.candidates().map((c, i) => {
        const side = sides[i];
        const wrong = this.choice.firstWrong[side];
        const chosen = this.choice.preference === side;
        return h(
          "section",
          { class: `sl-candidate${chosen ? " sl-chosen" : ""}`, "data-side": side, "aria-label": `Solution ${side}` },
          h("h3", {}, `${side}${chosen ? " (better)" : ""}`),
          h(
            "ol",
            { class: "sl-steps" },
            ...c.steps.map((s) => {
              const li = h("li", {
                class: `sl-step${wrong === s.index ? " sl-first-wrong" : ""}`,
                "data-index": String(s.index),
              });
              const body = h("div", { class: "sl-md" });
              setRendered(body, renderStep(s.text));
              li.append(body);
              if (wrong === s.index) li.append(h("p", { class: "sl-wrong-mark" }, "First wrong step"));
              // the marker's key moves it one step at a time; a click puts it here (again: none)
              const mark = h(
                "button",
                {
                  type: "button",
                  class: "sl-btn sl-small sl-mark-wrong",
                  "aria-pressed": wrong === s.index ? "true" : "false",
                  "aria-label": `${side}: step ${s.index + 1} is the first wrong step`,
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
          "aria-keyshortcuts": keyFor(action).split(" / ").pop(),
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
    this.verdict.textContent =
      p === null
        ? "Which is better? ← / a, → / b, t for a tie"
        : p === "tie"
          ? "Tie"
          : strength === null
            ? `${p} is better: by how much? 1 slightly, 2 clearly, 3 much`
            : `${p} is ${STRENGTHS[strength - 1].toLowerCase()} better`;
  }

  private change(update: (c: CompareChoice) => CompareChoice): void {
    this.alert.hidden = true; // a "choose first" or refusal no longer describes the choice now
    this.history.push(this.choice);
    this.choice = update(structuredClone(this.choice));
    this.render();
    this.saveDraft();
  }

  private draft(): CompareDraft {
    return { key: this.key, choice: this.choice, elapsedMs: this.elapsedBefore + (Date.now() - this.startedAt) };
  }

  private saveDraft(): void {
    const task = this.task;
    if (!task) return;
    localStorage.setItem(localKey(task.assignment_id), JSON.stringify(this.draft()));
    this.status.textContent = "Saved in this browser";
    window.clearTimeout(this.draftTimer);
    this.draftTimer = window.setTimeout(async () => {
      const r = await this.api.saveDraft(task.assignment_id, this.draft()).catch(() => null);
      if (r && r.status >= 200 && r.status < 300) this.status.textContent = "Saved";
    }, DRAFT_DEBOUNCE_MS);
  }

  private async beat(): Promise<void> {
    if (this.task) await this.api.heartbeat(this.task.assignment_id).catch(() => null);
  }

  private onKey(e: KeyboardEvent): void {
    if (this.confirmSkip.isOpen) return;
    if (focusTakesKey(e.target, e.key, this.submitButton)) return;
    const action = actionFor(e, "compare");
    if (!action) return;
    e.preventDefault();
    if (ignoredRepeat(e, action)) return;
    if (action === "shortcuts") return this.shortcuts.toggle();
    if (!this.task || this.submitting) return;
    const n = this.candidates().map((c) => c.steps.length);
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
        return this.change((c) => ({ ...c, strength }));
      }
      case "mark-wrong-a":
        return this.change((c) => ({ ...c, firstWrong: { ...c.firstWrong, A: nextMarker(c.firstWrong.A, n[0]) } }));
      case "mark-wrong-b":
        return this.change((c) => ({ ...c, firstWrong: { ...c.firstWrong, B: nextMarker(c.firstWrong.B, n[1]) } }));
      case "undo": {
        const previous = this.history.pop();
        if (previous) {
          this.alert.hidden = true; // as for a change: the alert described the choice undone
          this.choice = previous;
          this.render();
          this.saveDraft();
        }
        return;
      }
      case "submit":
        return void this.submit(true);
      default:
        return;
    }
  }

  /** `byKey`: sent by Enter, which may be the last submit's key again (a click or a tap is meant). */
  private async submit(byKey = false): Promise<void> {
    const task = this.task;
    if (!task || this.submitting) return;
    const answer = answerOf(this.choice);
    if (answer === null) {
      // the "Submitted" note stays: nothing was chosen on this pair yet, so there is nothing to fix
      if (byKey && this.repeat.isRepeat(this.untouched())) return;
      return this.fail(missingChoice(this.choice) ?? "");
    }
    this.submitting = true;
    window.clearTimeout(this.draftTimer); // a draft saved after the submit would be refused (409): the submit carries it
    const body = {
      idempotency_key: this.key,
      ...answer,
      total_time_ms: Math.round(this.draft().elapsedMs),
      first_wrong: this.choice.firstWrong,
    };
    const outcome = await submitUntilAcknowledged(() => this.api.request("POST", `assignments/${task.assignment_id}/submit/`, body), {
      onRetry: (attempt, why) => (this.status.textContent = `Submitting (retry ${attempt}: ${why})`),
    });
    this.submitting = false;
    if (!outcome.ok) {
      if (loggedOut(outcome.status, outcome.data)) {
        // kept in this browser: after logging in again this page (or a reload) sends it again
        return this.fail(loggedOutMessage("Not submitted. ", "Your choice is kept in this browser: submit again once you are back."));
      }
      if (outcome.status === 404 || outcome.status === 409) {
        // submitted or skipped already, taken, or not ours: the next pair instead of a dead end
        localStorage.removeItem(localKey(task.assignment_id));
        await this.load();
        return this.fail(`Not submitted: ${outcome.message}`);
      }
      return this.fail(`Not submitted: ${outcome.message}`);
    }
    localStorage.removeItem(localKey(task.assignment_id));
    this.alert.hidden = true;
    const next = (outcome.data as { next?: TaskOut | null } | null)?.next ?? null;
    this.show(next);
    this.status.textContent = `Submitted (${++this.submitted} this session)`;
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
    window.clearTimeout(this.draftTimer);
    const r = await this.api.skip(task.assignment_id).catch(() => null);
    this.submitting = false;
    if (!r) return this.fail("Not skipped: the server could not be reached. Try again.");
    if (r.status !== 200) return this.fail(`Not skipped: ${errorMessage(r.status, r.data)}`);
    localStorage.removeItem(localKey(task.assignment_id));
    this.alert.hidden = true;
    this.show((r.data as { next?: TaskOut | null } | null)?.next ?? null);
    this.status.textContent = "Skipped.";
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


