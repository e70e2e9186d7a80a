/**
 * Drafts: the whole work in progress on one assignment, saved in localStorage on every change and
 * on the server (debounced). Each save bumps `rev`, so on load the newer of the two wins.
 */
import type { SavedLabels, SubmitPayload } from "../labeling/state";

export interface Draft {
  v: 1;
  rev: number;
  saved_at: string;
  /** The idempotency key of this assignment's submit, made once and kept. */
  key: string;
  elapsed_ms: number;
  labels: SavedLabels | null;
  /** A submit sent but not yet acknowledged: resent as is after a reload. */
  pending?: SubmitPayload | null;
}

const PREFIX = "steplabel:draft:";

export function storageKey(assignmentId: number | string): string {
  return PREFIX + String(assignmentId);
}

export function isDraft(v: unknown): v is Draft {
  if (v === null || typeof v !== "object") return false;
  const d = v as Draft;
  return d.v === 1 && typeof d.rev === "number" && typeof d.key === "string" && d.key !== "";
}

export function loadLocal(assignmentId: number | string, storage: Storage = localStorage): Draft | null {
  try {
    const raw = storage.getItem(storageKey(assignmentId));
    if (!raw) return null;
    const parsed: unknown = JSON.parse(raw);
    return isDraft(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

export function saveLocal(assignmentId: number | string, draft: Draft, storage: Storage = localStorage): boolean {
  try {
    storage.setItem(storageKey(assignmentId), JSON.stringify(draft));
    return true;
  } catch {
    return false; // private mode or quota: the server copy still exists
  }
}

export function clearLocal(assignmentId: number | string, storage: Storage = localStorage): void {
  try {
    storage.removeItem(storageKey(assignmentId));
  } catch {
    /* nothing to clear */
  }
}

/** Drop drafts of other assignments (submitted or expired) so storage does not fill up. */
export function pruneLocal(keep: number | string, storage: Storage = localStorage): void {
  try {
    const doomed: string[] = [];
    for (let i = 0; i < storage.length; i++) {
      const k = storage.key(i);
      if (k && k.startsWith(PREFIX) && k !== storageKey(keep)) doomed.push(k);
    }
    doomed.forEach((k) => storage.removeItem(k));
  } catch {
    /* ignore */
  }
}

/** The newer of the local and the server draft (local wins a tie: it is saved first). */
export function pickDraft(local: Draft | null, server: unknown): Draft | null {
  const remote = isDraft(server) ? server : null;
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
): "edited" | "finished" | null {
  if (eventKey !== storageKey(assignmentId)) return null;
  if (newValue === null) return "finished";
  try {
    return isDraft(JSON.parse(newValue)) ? "edited" : null;
  } catch {
    return null;
  }
}
