/**
 * The step page's work on one assignment kept safe: drafts, the clock and heartbeats by the draft
 * keeper both pages share (autosave.ts), plus a submit retried until acknowledged (and resent
 * after a reload), skip, and a word when another tab works on the same solution.
 */
import type { SavedLabels, SubmitPayload } from "../labeling/state";
import { errorMessage } from "../shared/http";
import { loggedOut, loggedOutMessage } from "../shared/login";
import { Api, parseTask, submitUntilAcknowledged, type Task } from "./api";
import { DraftSync, GONE } from "./autosave";
import { type Draft, otherTabChange, stepDrafts } from "./draft";
import { submittedMessage } from "./guidance";
import { quoteShort, summarizeSubmit } from "./refused";
import type { ActiveTimer } from "./timer";

/** What the session needs from the page. */
export interface SessionHost {
  /** The labels to save with the draft. */
  labels(): SavedLabels | null;
  /** Text in the writer boxes not saved into the labels yet, by box id. */
  typing(): Record<string, string>;
  saveState(text: string): void;
  say(text: string): void;
  fail(message: string | Node): void;
  hideAlert(): void;
  /** A submit or skip started or ended: re-render (actions are disabled meanwhile). */
  busyChanged(): void;
  /** Show the task the server handed out after a submit or skip (null: the queue is empty). */
  showNext(task: Task | null): void;
  loadNext(): Promise<void>;
  progressChanged(): void;
  /** Refresh the progress; whether its Not recorded box now lists this assignment's refused submit. */
  refusedListed(assignmentId: number): Promise<boolean>;
}

type StepFields = Pick<Draft, "labels" | "pending" | "typing">;

export class Session {
  task: Task | null = null;
  submitting = false;
  private readonly sync: DraftSync<StepFields>;
  private pending: SubmitPayload | null = null;
  /** Another tab's change to this task's draft, said once per task. */
  private otherTab: "edited" | "finished" | null = null;
  /** The last submit was refused: the bar says so beside where the work is, until the next change. */
  private refused = false;

  constructor(
    private readonly api: Api,
    private readonly host: SessionHost,
    /** The project's slug (drafts name it: see DraftSync). */
    project: string,
  ) {
    this.sync = new DraftSync<StepFields>(
      api,
      {
        fields: () => ({ labels: host.labels(), pending: this.pending, typing: host.typing() }),
        status: (text) => this.status(text),
        say: (text) => host.say(text),
        fail: (message) => host.fail(message),
        loadNext: () => host.loadNext(),
        busy: () => this.submitting,
        describeWork: () => describeWork(host.labels(), host.typing()),
        leftBehind: (draft) => notRecorded(draft.labels, draft.typing),
      },
      stepDrafts,
      "solution",
      project,
    );
    // Two tabs on one assignment resume one draft and its key: whichever submits first is
    // recorded and the other is refused (409, kept). Say so as soon as the other tab acts.
    window.addEventListener("storage", (e) => this.onOtherTab(e.key, e.newValue));
  }

  private onOtherTab(key: string | null, value: string | null): void {
    const task = this.task;
    if (!task || this.submitting) return;
    const change = otherTabChange(key, value, task.assignmentId);
    if (change === null || change === this.otherTab) return;
    this.otherTab = change;
    this.host.fail(
      change === "edited"
        ? "This solution is open in another tab too, and ratings made there are not shown here. Work in one tab: " +
            "the first submit is the one recorded, a different one sent later is refused and kept for you."
        : "Another tab submitted or skipped this solution, or moved on from it. Reload this page before going on.",
    );
  }

  /** The idempotency key of this assignment's submit. */
  get idempotencyKey(): string {
    return this.sync.idempotencyKey;
  }

  /** The active-time clock of this assignment (a new one per task). */
  get timer(): ActiveTimer {
    return this.sync.timer;
  }

  /**
   * Take over a task with its saved draft (the newer of this browser's and the server's), or a
   * fresh key and clock. Returns the draft so the page can restore its labels.
   */
  begin(task: Task | null): Draft | null {
    this.task = task;
    this.submitting = false;
    this.pending = null;
    this.otherTab = null;
    this.refused = false;
    const draft = this.sync.begin(task?.assignmentId ?? null, task?.draft ?? null);
    this.pending = draft?.pending ?? null;
    return draft;
  }

  /**
   * Once the page shows the task: store its key before any rating, resend a submit a reload cut
   * off. `untouched`: nothing is rated yet, so the bar stays blank while the key is stored.
   */
  started(draft: Draft | null, untouched: boolean): void {
    this.sync.started(draft, untouched);
    if (this.pending) void this.send(this.pending);
  }

  /** The bar's word on where the work is, after a refused submit with that said first. */
  private status(text: string): void {
    this.host.saveState(this.refused && text ? `Not submitted · ${text}` : text);
  }

  /** Save locally now and (debounced) on the server; `quiet`: the bar does not report this save. */
  persist(toServer: boolean, quiet = false): void {
    if (toServer) this.refused = false; // a change since the refusal: the bar describes the work as it is now
    this.sync.persist(toServer, quiet);
  }

  /** Send the draft to the server now; `keepalive` when the page is going away. */
  flush(keepalive: boolean): void {
    this.sync.flush(keepalive);
  }

  async heartbeat(): Promise<void> {
    if (await this.sync.heartbeat()) this.host.progressChanged();
  }

  /** Submit a payload built with this assignment's key and active time (saved first as pending). */
  async submit(payload: SubmitPayload): Promise<void> {
    if (!this.task || this.submitting) return; // a second press while sending does nothing
    this.pending = payload;
    this.persist(false);
    await this.send(payload);
  }

  private async send(payload: SubmitPayload): Promise<void> {
    const task = this.task;
    if (!task || this.submitting) return;
    this.submitting = true;
    this.refused = false;
    this.sync.cancel();
    this.host.hideAlert();
    this.host.busyChanged();
    this.host.say("Submitting…");
    const outcome = await submitUntilAcknowledged(() => this.api.submit(task.assignmentId, payload), {
      onRetry: (n, why) =>
        this.host.say(`Could not reach the server (${why}); retrying, attempt ${n + 1}. Your work is safe.`),
    });
    if (this.task !== task) return;
    if (!outcome.ok) {
      this.submitting = false;
      this.pending = null;
      if (GONE.has(outcome.status)) {
        // Submitted or skipped already (another tab; an old copy of the page after Back /
        // Forward), taken once the lease ran out, or not ours: nothing here can be recorded (a
        // refused submit is kept on the server and listed), so the next solution comes instead.
        // Listed, the Not recorded box says why with the ratings: the API's words for its clients
        // ("refused_submits … GET …/me/") in a red alert above it said the same thing twice.
        if (await this.host.refusedListed(task.assignmentId)) {
          await this.sync.moveOn("Not submitted: your ratings are shown under Not recorded above.");
        } else {
          await this.sync.moveOn(`Not submitted: ${outcome.message}`, true);
        }
        return;
      }
      this.refused = true;
      this.persist(false);
      // The submit cancelled the pending server save: say where the work is now.
      const gone = this.sync.gone;
      this.status(gone ? "Saved in this browser" : this.sync.serverSaved ? "Saved" : "Saving…");
      if (!gone && !this.sync.serverSaved) this.flush(false);
      this.host.busyChanged();
      this.host.say("");
      // A logged-out submit (the session timed out) is kept here: log in again, then submit again.
      this.host.fail(
        loggedOut(outcome.status, outcome.data)
          ? loggedOutMessage("Not submitted. ", "Your work is kept in this browser: submit again once you are back.")
          : `Not submitted: ${outcome.message}`,
      );
      return;
    }
    this.sync.clear();
    this.host.progressChanged();
    const data = outcome.data;
    if (data) {
      const following = data.next ? parseTask(data.next) : null;
      this.host.showNext(following);
      this.host.say(submittedMessage(payload.finish_reason, following !== null));
      if (data.detail) this.host.fail(data.detail);
    } else {
      this.host.say(submittedMessage(payload.finish_reason, false));
      await this.host.loadNext();
    }
  }

  /** Release the task without labels; the response carries the next one. */
  async skip(): Promise<void> {
    const task = this.task;
    if (!task || this.submitting) return;
    this.submitting = true;
    this.host.busyChanged();
    try {
      const r = await this.api.skip(task.assignmentId);
      if (this.task !== task) return;
      if (r.status === 200) {
        this.sync.clear();
        const next = r.data?.next;
        this.host.showNext(next ? parseTask(next) : null);
        this.host.say("Skipped.");
        return;
      }
      this.submitting = false;
      this.host.busyChanged();
      this.host.fail(`Not skipped: ${errorMessage(r.status, r.data)}`);
    } catch {
      this.submitting = false;
      this.host.busyChanged();
      this.host.fail("Not skipped: the server could not be reached. Try again.");
    }
  }
}

/** Saved labels in the words of a refused submit ("Step 1 Positive · Step 2 Negative (flagged)"),
 * or null when no step holds any work. */
export function describeLabels(saved: SavedLabels | null): string | null {
  const steps = (saved?.labels ?? [])
    .map((label, index) => ({ ...label, index }))
    .filter((label) => label.rating !== null || label.flagged || label.alternatives.length || label.critique || label.human);
  return steps.length ? summarizeSubmit({ steps }) : null;
}

/** The writer boxes (stepview.ts ids) whose unsaved text a draft keeps, and what each holds. */
const TYPED_BOXES: readonly [RegExp, string][] = [
  [/^sl-critique-(\d+)$/, "a critique of step N"],
  [/^sl-human-(\d+)$/, "your own step N"],
  [/^sl-newalt-(\d+)$/, "a new alternative at step N"],
];

/** Text still being written in a draft's boxes, in words: "a critique of step 3 “The sum is…”". */
export function describeTyping(typing: Readonly<Record<string, string>> | undefined): string[] {
  const said: { step: number; words: string }[] = [];
  for (const [id, raw] of Object.entries(typing ?? {})) {
    const text = typeof raw === "string" ? raw.trim() : "";
    if (!text) continue;
    for (const [pattern, what] of TYPED_BOXES) {
      const m = pattern.exec(id);
      if (!m) continue;
      const step = Number(m[1]) + 1;
      said.push({ step, words: `${what.replace("N", String(step))} being written ${quoteShort(text)}` });
    }
  }
  return said.sort((a, b) => a.step - b.step).map((s) => s.words);
}

/** The labels and the text still being typed, in words; null when there is neither. */
export function describeWork(saved: SavedLabels | null, typing?: Readonly<Record<string, string>>): string | null {
  const labels = describeLabels(saved);
  const parts = [...(labels === null ? [] : [labels]), ...describeTyping(typing)];
  return parts.length ? parts.join(" · ") : null;
}

/** A draft's labels that were never submitted, in words for the note when the claim on them was
 * lost: "your 2 ratings on it were not recorded (Step 1 Positive · Step 2 Neutral)"; null when no
 * step holds any work. Alternatives' ratings count as ratings; text still being typed in a box (a
 * critique not yet saved) is work too, and is named with its words so it can be written again. */
export function notRecorded(saved: SavedLabels | null, typing?: Readonly<Record<string, string>>): string | null {
  const words = describeWork(saved, typing);
  if (words === null) return null;
  const n = (saved?.labels ?? []).reduce(
    (sum, label) => sum + (label.rating !== null ? 1 : 0) + label.alternatives.filter((alt) => alt.rating !== null).length,
    0,
  );
  const what = n === 0 ? "your work on it was" : n === 1 ? "your rating on it was" : `your ${n} ratings on it were`;
  return `${what} not recorded (${words})`;
}
