/**
 * Drafts: the whole work in progress on one assignment, saved in localStorage on every change and
 * on the server (debounced). Each save bumps `rev`, so on load the newer of the two wins. The step
 * and compare pages keep theirs the same way (autosave.ts), each under keys of its own.
 */
import type { SavedLabels, SubmitPayload } from "../labeling/state";

/** What every page's draft carries beside its own work. */
export interface DraftBase {
  v: 1;
  rev: number;
  saved_at: string;
  /** The idempotency key of this assignment's submit, made once and kept. */
  key: string;
  elapsed_ms: number;
  /** The project's slug: one browser keeps the drafts of all its projects under one prefix, so a
   * page leaves other projects' drafts alone. Absent in drafts saved before it was written. */
  project?: string;
}

/** The step page's draft. */
export interface Draft extends DraftBase {
  labels: SavedLabels | null;
  /** A submit sent but not yet acknowledged: resent as is after a reload. */
  pending?: SubmitPayload | null;
  /** Text in the writer boxes not saved into the labels yet, by box id (stepview.ts `typing`). */
  typing?: Record<string, string>;
}

export function isDraft(v: unknown): v is DraftBase {
  if (v === null || typeof v !== "object") return false;
  const d = v as DraftBase;
  return d.v === 1 && typeof d.rev === "number" && typeof d.key === "string" && d.key !== "";
}

/** One page's drafts in this browser, by assignment. Storage errors (private mode, quota) are
 * swallowed: the server copy still exists. */
export class LocalDrafts {
  constructor(
    private readonly prefix: string,
    private readonly storage?: Storage, // localStorage, read when used (tests pass their own)
  ) {}

  private get store(): Storage {
    return this.storage ?? localStorage;
  }

  key(assignmentId: number | string): string {
    return this.prefix + String(assignmentId);
  }

  load<D extends DraftBase = Draft>(assignmentId: number | string): D | null {
    try {
      const raw = this.store.getItem(this.key(assignmentId));
      if (!raw) return null;
      const parsed: unknown = JSON.parse(raw);
      return isDraft(parsed) ? (parsed as D) : null;
    } catch {
      return null;
    }
  }

  /** The revision of the draft stored for this assignment (-1: none); every tab of this browser
   * shares it. */
  storedRev(assignmentId: number | string): number {
    return this.load<DraftBase>(assignmentId)?.rev ?? -1;
  }

  save(assignmentId: number | string, draft: DraftBase): boolean {
    try {
      this.store.setItem(this.key(assignmentId), JSON.stringify(draft));
      return true;
    } catch {
      return false;
    }
  }

  clear(assignmentId: number | string): void {
    try {
      this.store.removeItem(this.key(assignmentId));
    } catch {
      /* nothing to clear */
    }
  }

  /** This page's drafts of `project` for other assignments than `keep` (null: none kept), by
   * assignment id, and those saved before drafts named their project (`project` absent): a tab of
   * another project may be open, so its drafts are not this page's to drop. Junk reads as null. */
  others(keep: number | string | null, project: string): { id: string; draft: DraftBase | null }[] {
    const found: { id: string; draft: DraftBase | null }[] = [];
    try {
      for (let i = 0; i < this.store.length; i++) {
        const k = this.store.key(i);
        if (!k || !k.startsWith(this.prefix) || (keep !== null && k === this.key(keep))) continue;
        const id = k.slice(this.prefix.length);
        const draft = this.load<DraftBase>(id);
        if (draft?.project === undefined || draft.project === project) found.push({ id, draft });
      }
    } catch {
      /* storage unavailable: nothing to list */
    }
    return found;
  }

  /** Drop this page's drafts of `project` for other assignments (submitted, skipped or expired) so
   * storage does not fill up, except those `spare` keeps; other projects' drafts stay (see `others`). */
  prune(keep: number | string, project: string, spare: (id: string, draft: DraftBase | null) => boolean = () => false): void {
    for (const { id, draft } of this.others(keep, project)) if (!spare(id, draft)) this.clear(id);
  }
}

export const stepDrafts = new LocalDrafts("steplabel:draft:");
/** Apart from the step page's: neither page prunes the other's drafts (a compare tab and a step
 * tab of two projects), nor reads them as another tab's work on its own assignment. */
export const compareDrafts = new LocalDrafts("steplabel.compare.");

/** The newer of the local and the server draft (local wins a tie: it is saved first). */
export function pickDraft<D extends DraftBase>(local: D | null, server: unknown): D | null {
  const remote = isDraft(server) ? (server as D) : null;
  if (local && remote) return remote.rev > local.rev ? remote : local;
  return local ?? remote;
}

/**
 * What a `storage` event says about this tab's assignment: another tab of this browser saved
 * other work on it ("edited": same key, so whichever submits first is recorded and the other is
 * refused) or removed its draft ("finished": submitted, skipped, or moved on). Null: not ours.
 */
export function otherTabChange(
  eventKey: string | null,
  newValue: string | null,
  assignmentId: number | string,
  drafts: LocalDrafts = stepDrafts,
): "edited" | "finished" | null {
  if (eventKey !== drafts.key(assignmentId)) return null;
  if (newValue === null) return "finished";
  try {
    return isDraft(JSON.parse(newValue)) ? "edited" : null;
  } catch {
    return null;
  }
}
