/**
 * One assignment's work kept safe, the same way on the step and the compare page: its idempotency
 * key and active-time clock, a draft saved in this browser on every change and on the server a
 * moment later (at once when the tab is hidden or closed, or the network is back), the newer of
 * the two drafts resumed by revision, heartbeats that keep the lease, and the bar told where the
 * work is. The page brings what it saves (labels, a choice) and how it submits.
 */
import { loggedOut } from "../shared/login";
import { type Api, assignmentFinished, newIdempotencyKey } from "./api";
import { type DraftBase, isDraft, type LocalDrafts, pickDraft } from "./draft";
import { ActiveTimer } from "./timer";

const DRAFT_DEBOUNCE_MS = 1_500;
/** Steady work (a change every second) restarted the debounce for as long as it lasted, so the
 * server held nothing of it until a pause: a crashed browser or another device lost it all. */
const DRAFT_MAX_WAIT_MS = 5_000;

/** Statuses that mean the assignment is no longer this annotator's. */
export const GONE = new Set([404, 409, 410]);

/** What the draft keeper needs from the page. */
export interface SyncHost<F> {
  /** The page's work, saved beside the key, revision and clock. */
  fields(): F;
  /** The bar's word on where the work is ("Saving…", "Saved", "Offline: …"). */
  status(text: string): void;
  say(text: string): void;
  fail(message: string): void;
  loadNext(): Promise<void>;
  /** A submit or skip is in flight: no draft save then (one after a submit would be refused). */
  busy(): boolean;
  /** This tab's work in words ("Step 1 Neutral · Step 2 Positive"), or null when there is none:
   * said when the assignment turns out finished elsewhere while this tab held changes. */
  describeWork?(): string | null;
  /** What a draft this browser kept of another assignment holds, said when that claim turns out
   * lost ("your 2 ratings on it were not recorded (Step 1 Positive · Step 2 Neutral)"); null when
   * it holds no work. Without it such drafts are dropped unasked. */
  leftBehind?(draft: DraftBase & F): string | null;
}

export class DraftSync<F extends object> {
  timer = new ActiveTimer(0);
  /** The server said the assignment is no longer ours: drafts stay in this browser only, so a
   * refused submit the server kept on the assignment is not overwritten by a later save. */
  gone = false;
  private id: number | null = null;
  /** Bumped per task shown: an answer about an earlier one is not reported. */
  private epoch = 0;
  private key = "";
  private rev = 0;
  private serverRev = -1; // revision of the server's draft of this task when it was loaded
  private saved = true; // the server holds the latest change
  private quiet = false; // the pending server save only stores the key: the bar keeps quiet
  private debounce: number | undefined;
  /** When the oldest change the server does not hold yet was made (null: none waits). */
  private pendingSince: number | null = null;
  /** Moving on from an assignment the server says is over: one move, however many answers say so. */
  private leaving = false;
  /** Drafts left on other assignments whose fate the server is being asked (see sweep). */
  private readonly asking = new Set<string>();

  constructor(
    private readonly api: Pick<Api, "saveDraft" | "heartbeat">,
    private readonly host: SyncHost<F>,
    private readonly local: LocalDrafts,
    /** What the page works on, in its words ("solution", "pair"). */
    private readonly what: string,
    /** The project's slug, written in every draft: drafts of other projects are not this page's. */
    private readonly project: string,
  ) {
    // Back online: what an offline save kept only here goes to the server without another change.
    if (typeof window !== "undefined") window.addEventListener("online", () => this.flush(false));
  }

  get idempotencyKey(): string {
    return this.key;
  }

  get serverSaved(): boolean {
    return this.saved;
  }

  /** Take over a task (null: none) with the newer of this browser's and the server's draft, or a
   * fresh key and clock; returns that draft for the page to restore its work from. */
  begin(id: number | null, server: unknown): (DraftBase & F) | null {
    this.id = id;
    this.epoch += 1;
    this.gone = false;
    this.leaving = false;
    this.cancel();
    this.pendingSince = null;
    // Nothing of this task waits to be reported (a submit cancelled the last task's save): its
    // first save, which only stores the key, stays quiet, as on a page just loaded. Left as the
    // last task had them, the bar said "Saved" over "Submitted" on the next, untouched task.
    this.saved = true;
    this.quiet = false;
    this.sweep(id);
    if (id === null) return null;
    const draft = pickDraft(this.local.load<DraftBase & F>(id), server);
    this.serverRev = isDraft(server) ? server.rev : -1;
    this.key = draft?.key ?? newIdempotencyKey();
    this.rev = draft?.rev ?? 0;
    this.timer = new ActiveTimer(draft?.elapsed_ms ?? 0);
    // Reading the new task is work: the clock runs from the moment it is shown.
    if (document.visibilityState === "visible") this.timer.activity();
    else this.timer.setVisible(false);
    return draft;
  }

  /**
   * This browser's drafts of other assignments of this project (`keep`: the task shown). One with
   * work was left by a tab closed mid-task: the server is asked about it (a heartbeat) before it
   * goes. Finished elsewhere (submitted or skipped on another device, or a submit acknowledged as
   * the tab closed) it goes without a word. Lost (its lease ran out and another annotator took the
   * task; the server records no label of it) the annotator is told what was not recorded: the next
   * task used to appear as if nothing had been done. Renewed (its place came free) or unanswered it
   * stays: the server serves it again, or the next task shown asks again. The rest go, unless no
   * task is shown (`keep` null: the queue is empty, or the claim failed and this browser may hold
   * the current task's only copy).
   */
  private sweep(keep: number | null): void {
    const lost: Promise<string | null>[] = [];
    for (const { id, draft } of this.local.others(keep, this.project)) {
      const work = draft?.project === this.project ? this.workIn(draft) : null;
      if (work !== null && /^\d+$/.test(id)) lost.push(this.ask(id, work));
      else if (keep !== null) this.local.clear(id);
    }
    if (lost.length === 0) return;
    void Promise.all(lost).then((notes) => {
      const said = notes.filter((note) => note !== null);
      if (said.length) this.host.fail(said.join(" "));
    });
  }

  private workIn(draft: DraftBase): string | null {
    try {
      return this.host.leftBehind?.(draft as DraftBase & F) ?? null;
    } catch {
      return null; // a draft of an older shape: no work this page can name
    }
  }

  /** Whether the claim on assignment `id` was lost with the work in its draft: the note, or null. */
  private async ask(id: string, work: string): Promise<string | null> {
    if (this.asking.has(id)) return null;
    this.asking.add(id);
    try {
      const r = await this.api.heartbeat(Number(id));
      if (assignmentFinished(r.status, r.data)) {
        this.local.clear(id);
      } else if (GONE.has(r.status)) {
        this.local.clear(id);
        return `Your claim on the previous ${this.what} expired and it went to someone else; ${work}.`;
      }
    } catch {
      /* offline: asked again when the next task is shown */
    } finally {
      this.asking.delete(id);
    }
    return null;
  }

  /**
   * Once the page shows the task: store its key before any change. `untouched`: nothing is done
   * yet, so the bar stays blank while the key is stored (a "Saved" then reads as if work was kept).
   */
  started(draft: DraftBase | null, untouched: boolean): void {
    // The server already holds this draft when its revision is at least the restored one's; a
    // newer local one (the tab closed before its save) goes to the server now, so another browser
    // resumes it too. Either way the bar says where the work is, not nothing.
    const synced = draft !== null && this.serverRev >= draft.rev;
    this.host.status("");
    this.persist(!synced, untouched);
    this.saved = synced;
    if (synced && !untouched) this.host.status("Saved");
  }

  private draft(): DraftBase & F {
    return {
      v: 1,
      rev: this.rev,
      saved_at: new Date().toISOString(),
      key: this.key,
      elapsed_ms: Math.round(this.timer.elapsedMs()),
      project: this.project,
      ...this.host.fields(),
    };
  }

  /** Save locally now and (debounced) on the server; `quiet`: the bar does not report this save. */
  persist(toServer: boolean, quiet = false): void {
    if (this.id === null) return;
    // past any revision another tab of this browser stored meanwhile: the latest change is the
    // newest draft, here and on the server
    this.rev = Math.max(this.rev, this.local.storedRev(this.id)) + 1;
    this.local.save(this.id, this.draft());
    if (!toServer) return;
    // a quiet save (text typed in a box) rides along with a reported one that waits: the bar still
    // says "Saved" when that one lands
    this.quiet = quiet && (this.saved || this.quiet);
    this.saved = false;
    if (!quiet) this.host.status("Saving…");
    this.cancel();
    const now = Date.now();
    this.pendingSince ??= now;
    const wait = Math.min(DRAFT_DEBOUNCE_MS, Math.max(0, this.pendingSince + DRAFT_MAX_WAIT_MS - now));
    this.debounce = window.setTimeout(() => this.flush(false), wait);
  }

  /** Drop the debounced server save (a submit carries the work; a skip discards it). */
  cancel(): void {
    window.clearTimeout(this.debounce);
  }

  /** Forget this task's draft in this browser (submitted, skipped, or over). */
  clear(): void {
    if (this.id !== null) this.local.clear(this.id);
  }

  /** Send the draft to the server now; `keepalive` when the page is going away. */
  flush(keepalive: boolean): void {
    const id = this.id;
    if (id === null || this.host.busy()) return;
    if (this.saved) {
      // nothing new for the server, but the clock moved on: a reload resumes it from here
      if (keepalive) this.saveHere(id, this.draft());
      return;
    }
    this.cancel();
    this.pendingSince = null;
    const draft = this.draft();
    this.saveHere(id, draft);
    if (this.gone) return;
    // A keepalive save (the tab hidden or closing) cancelled the debounced one: its answer, read
    // where the page lives on, is what the bar reports (it said "Saving…" until the next beat).
    const epoch = this.epoch;
    this.api.saveDraft(id, draft, keepalive).then(
      (r) => {
        if (epoch !== this.epoch) return;
        if (r.status >= 200 && r.status < 300) {
          if (draft.rev === this.rev) {
            this.saved = true;
            if (!this.quiet) this.host.status("Saved");
          }
        } else if (assignmentFinished(r.status, r.data)) {
          void this.finishedElsewhere(detail(r.data, `This ${this.what} is no longer yours to label.`));
        } else if (GONE.has(r.status)) {
          this.gone = true;
          this.host.status("Saved in this browser");
          this.host.fail(detail(r.data, `This ${this.what} is no longer yours to label; your work is kept in this browser.`));
        } else if (loggedOut(r.status, r.data)) {
          this.host.status("Saved in this browser (you are logged out)");
        } else {
          this.host.status("Saved in this browser (server save failed, will retry)");
        }
      },
      () => {
        if (epoch === this.epoch) this.host.status("Offline: saved in this browser, will retry");
      },
    );
  }

  /** Store this tab's draft in the browser unless another tab stored newer work on the task since:
   * a tab that only moved its clock (or is closing) must not put its older labels over it. */
  private saveHere(id: number, draft: DraftBase & F): void {
    if (this.local.storedRev(id) <= draft.rev) this.local.save(id, draft);
  }

  /** Extend the lease (and retry an unsaved draft); false when no beat was sent or it is stale. */
  async heartbeat(): Promise<boolean> {
    const id = this.id;
    const epoch = this.epoch;
    if (id === null || this.host.busy()) return false;
    if (!this.saved) this.flush(false);
    try {
      const r = await this.api.heartbeat(id);
      if (epoch !== this.epoch) return false;
      if (assignmentFinished(r.status, r.data)) {
        void this.finishedElsewhere(detail(r.data, `This ${this.what} is no longer yours to label.`));
      } else if (GONE.has(r.status)) {
        this.gone = true;
        this.host.status("Saved in this browser"); // no more server saves: the bar says where the work is
        this.host.fail(detail(r.data, `Your lease on this ${this.what} ended. Your work is kept in this browser.`));
      }
    } catch {
      /* offline: the next beat tries again */
    }
    return true;
  }

  /**
   * The server says the assignment was submitted or skipped elsewhere (another tab or device of
   * this annotator). Changes this tab made that the server never got were dropped with a passing
   * word: now they are named in an alert that stays, so the annotator sees what was not recorded.
   */
  private finishedElsewhere(why: string): Promise<void> {
    const work = this.saved ? null : (this.host.describeWork?.() ?? null);
    if (work === null) return this.moveOn(why);
    return this.moveOn(`${why} Not recorded from this tab: ${work}.`, true);
  }

  /**
   * Leave an assignment that is over for this annotator (see assignmentFinished): the next task,
   * with a word why (`alert`: as an alert, for a submit that was not recorded).
   */
  async moveOn(why: string, alert = false): Promise<void> {
    const epoch = this.epoch;
    if (this.id === null || this.leaving || (this.host.busy() && !alert)) return; // a submit in flight decides
    this.leaving = true;
    this.gone = true;
    this.clear();
    await this.host.loadNext();
    const text = this.id !== null && this.epoch !== epoch ? `${why} Here is the next ${this.what}.` : why;
    if (alert) this.host.fail(text);
    else this.host.say(text);
  }
}

/**
 * The clock follows the annotator's input and the tab's visibility, and a tab hidden or closing
 * sends its draft at once with keepalive: the last change does not wait out the debounce (a
 * closed tab would keep it only in this browser).
 */
export function watchPage(work: { readonly timer: ActiveTimer; flush(keepalive: boolean): void }): void {
  for (const ev of ["keydown", "pointerdown", "wheel", "scroll", "pointermove"]) {
    window.addEventListener(ev, () => work.timer.activity(), { passive: true, capture: true });
  }
  document.addEventListener("visibilitychange", () => {
    work.timer.setVisible(document.visibilityState === "visible");
    if (document.visibilityState === "hidden") work.flush(true);
  });
  window.addEventListener("pagehide", () => work.flush(true));
}

function detail(data: unknown, fallback: string): string {
  if (data && typeof data === "object" && typeof (data as { detail?: unknown }).detail === "string") {
    return (data as { detail: string }).detail;
  }
  return fallback;
}
