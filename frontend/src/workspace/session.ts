/**
 * The work on one assignment kept safe: its idempotency key and active-time clock, drafts saved in
 * this browser on every change and on the server a moment later, heartbeats that keep the lease,
 * a submit retried until acknowledged (and resent after a reload), and skip.
 */
import type { SavedLabels, SubmitPayload } from "../labeling/state";
import { errorMessage } from "../shared/http";
import { loggedOut, loggedOutMessage } from "../shared/login";
import { Api, assignmentFinished, newIdempotencyKey, parseTask, submitUntilAcknowledged, type Task } from "./api";
import {
  clearLocal,
  type Draft,
  isDraft,
  loadLocal,
  otherTabChange,
  pickDraft,
  pruneLocal,
  saveLocal,
} from "./draft";
import { submittedMessage } from "./guidance";
import { ActiveTimer } from "./timer";

const DRAFT_DEBOUNCE_MS = 1_500;

/** What the session needs from the page. */
export interface SessionHost {
  /** The labels to save with the draft. */
  labels(): SavedLabels | null;
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
}

/** Statuses that mean the assignment is no longer this annotator's. */
const GONE = new Set([404, 409, 410]);

export class Session {
  task: Task | null = null;
  submitting = false;
  timer = new ActiveTimer(0);
  private key = "";
  private rev = 0;
  private draftTimer: number | undefined;
  private serverSaved = true;
  private quietSave = false; // the pending server save only stores the key: the bar keeps quiet
  private serverRev = -1; // revision of the server's draft of this task when it was loaded
  private pending: SubmitPayload | null = null;
  /** The server said the assignment is no longer ours: drafts stay in this browser only, so a
   * refused submit the server kept on the assignment is not overwritten by a later save. */
  private gone = false;
  /** Another tab's change to this task's draft, said once per task. */
  private otherTab: "edited" | "finished" | null = null;
  /** The last submit was refused: the bar says so beside where the work is, until the next change. */
  private refused = false;
  /** Moving on from an assignment the server says is over: one move, however many answers say so. */
  private leaving = false;

  constructor(
    private readonly api: Api,
    private readonly host: SessionHost,
  ) {
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
    return this.key;
  }

  /**
   * Take over a task with its saved draft (the newer of this browser's and the server's), or a
   * fresh key and clock. Returns the draft so the page can restore its labels.
   */
  begin(task: Task | null): Draft | null {
    this.task = task;
    this.submitting = false;
    this.pending = null;
    this.gone = false;
    this.otherTab = null;
    this.refused = false;
    this.leaving = false;
    window.clearTimeout(this.draftTimer);
    if (!task) return null;
    const draft = pickDraft(loadLocal(task.assignmentId), task.draft);
    this.serverRev = isDraft(task.draft) ? task.draft.rev : -1;
    this.key = draft?.key ?? newIdempotencyKey();
    this.rev = draft?.rev ?? 0;
    this.timer = new ActiveTimer(draft?.elapsed_ms ?? 0);
    // Reading the new task is work: the clock runs from the moment it is shown.
    if (document.visibilityState === "visible") this.timer.activity();
    else this.timer.setVisible(false);
    this.pending = draft?.pending ?? null;
    pruneLocal(task.assignmentId);
    return draft;
  }

  /**
   * Once the page shows the task: store its key before any rating, resend a submit a reload cut
   * off. `untouched`: nothing is rated yet, so the bar stays blank while the key is stored (a
   * "Saved" before any rating reads as if work had been kept).
   */
  started(draft: Draft | null, untouched: boolean): void {
    // The server already holds this draft when its revision is at least the restored one's; a
    // newer local one (the tab closed before its save) goes to the server now, so another browser
    // resumes it too. Either way the bar says where the work is, not nothing.
    const synced = draft !== null && this.serverRev >= draft.rev;
    this.status("");
    this.persist(!synced, untouched);
    this.serverSaved = synced;
    if (synced && !untouched) this.status("Saved");
    if (this.pending) void this.send(this.pending);
  }

  /** The bar's word on where the work is, after a refused submit with that said first. */
  private status(text: string): void {
    this.host.saveState(this.refused && text ? `Not submitted · ${text}` : text);
  }

  private draft(): Draft {
    return {
      v: 1,
      rev: this.rev,
      saved_at: new Date().toISOString(),
      key: this.key,
      elapsed_ms: Math.round(this.timer.elapsedMs()),
      labels: this.host.labels(),
      pending: this.pending,
    };
  }

  /** Save locally now and (debounced) on the server; `quiet`: the bar does not report this save. */
  persist(toServer: boolean, quiet = false): void {
    if (!this.task) return;
    this.rev += 1;
    saveLocal(this.task.assignmentId, this.draft());
    if (!toServer) return;
    this.refused = false; // a change since the refusal: the bar describes the work as it is now
    this.serverSaved = false;
    this.quietSave = quiet;
    if (!quiet) this.status("Saving…");
    window.clearTimeout(this.draftTimer);
    this.draftTimer = window.setTimeout(() => this.flush(false), DRAFT_DEBOUNCE_MS);
  }

  /** Send the draft to the server now; `keepalive` when the page is going away. */
  flush(keepalive: boolean): void {
    const task = this.task;
    if (!task || this.submitting) return;
    if (this.serverSaved) {
      // nothing new for the server, but the clock moved on: a reload resumes it from here
      if (keepalive) saveLocal(task.assignmentId, this.draft());
      return;
    }
    window.clearTimeout(this.draftTimer);
    const draft = this.draft();
    saveLocal(task.assignmentId, draft);
    if (this.gone) return;
    // A keepalive save (the tab hidden or closing) cancelled the debounced one: its answer, read
    // where the page lives on, is what the bar reports (it said "Saving…" until the next beat).
    this.api.saveDraft(task.assignmentId, draft, keepalive).then(
      (r) => {
        if (this.task !== task) return;
        if (r.status >= 200 && r.status < 300) {
          if (draft.rev === this.rev) {
            this.serverSaved = true;
            if (!this.quietSave) this.status("Saved");
          }
        } else if (assignmentFinished(r.status, r.data)) {
          void this.moveOn(detail(r.data, "This solution is no longer yours to label."));
        } else if (GONE.has(r.status)) {
          this.gone = true;
          this.status("Saved in this browser");
          this.host.fail(detail(r.data, "This solution is no longer yours to label; your work is kept in this browser."));
        } else if (loggedOut(r.status, r.data)) {
          this.status("Saved in this browser (you are logged out)");
        } else {
          this.status("Saved in this browser (server save failed, will retry)");
        }
      },
      () => {
        if (this.task === task) this.status("Offline: saved in this browser, will retry");
      },
    );
  }

  async heartbeat(): Promise<void> {
    const task = this.task;
    if (!task || this.submitting) return;
    if (!this.serverSaved) this.flush(false);
    try {
      const r = await this.api.heartbeat(task.assignmentId);
      if (this.task !== task) return;
      if (assignmentFinished(r.status, r.data)) {
        void this.moveOn(detail(r.data, "This solution is no longer yours to label."));
      } else if (GONE.has(r.status)) {
        this.gone = true;
        this.host.fail(detail(r.data, "Your lease on this solution ended. Your work is kept in this browser."));
      }
    } catch {
      /* offline: the next beat tries again */
    }
    this.host.progressChanged();
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
    window.clearTimeout(this.draftTimer);
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
        this.host.progressChanged();
        await this.moveOn(`Not submitted: ${outcome.message}`, true);
        return;
      }
      this.refused = true;
      this.persist(false);
      // The submit cancelled the pending server save: say where the work is now.
      this.serverSaved = !this.gone && this.serverSaved;
      this.status(this.gone ? "Saved in this browser" : this.serverSaved ? "Saved" : "Saving…");
      if (!this.gone && !this.serverSaved) this.flush(false);
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
    clearLocal(task.assignmentId);
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

  /**
   * Leave an assignment that is over for this annotator (see assignmentFinished): the next task,
   * with a word why (`alert`: as an alert, for a submit that was not recorded).
   */
  private async moveOn(why: string, alert = false): Promise<void> {
    const task = this.task;
    if (!task || this.leaving || (this.submitting && !alert)) return; // a submit in flight decides
    this.leaving = true;
    this.gone = true;
    clearLocal(task.assignmentId);
    await this.host.loadNext();
    const text = this.task && this.task !== task ? `${why} Here is the next solution.` : why;
    if (alert) this.host.fail(text);
    else this.host.say(text);
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
        clearLocal(task.assignmentId);
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

function detail(data: unknown, fallback: string): string {
  if (data && typeof data === "object" && typeof (data as { detail?: unknown }).detail === "string") {
    return (data as { detail: string }).detail;
  }
  return fallback;
}
