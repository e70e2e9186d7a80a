import { describe, expect, it } from "vitest";

import {
  clearLocal,
  type Draft,
  isDraft,
  loadLocal,
  otherTabChange,
  pickDraft,
  pruneLocal,
  saveLocal,
  storageKey,
} from "./draft";

class MemoryStorage implements Storage {
  private m = new Map<string, string>();
  get length() {
    return this.m.size;
  }
  clear() {
    this.m.clear();
  }
  getItem(k: string) {
    return this.m.get(k) ?? null;
  }
  key(i: number) {
    return [...this.m.keys()][i] ?? null;
  }
  removeItem(k: string) {
    this.m.delete(k);
  }
  setItem(k: string, v: string) {
    this.m.set(k, v);
  }
}

const draft = (rev: number, key = "k"): Draft => ({
  v: 1,
  rev,
  saved_at: "2026-01-01T00:00:00Z",
  key,
  elapsed_ms: 0,
  labels: null,
});

describe("drafts", () => {
  it("saves, loads, prunes and clears by assignment", () => {
    const st = new MemoryStorage();
    saveLocal(1, draft(3), st);
    saveLocal(2, draft(1), st);
    expect(loadLocal(1, st)?.rev).toBe(3);
    pruneLocal(2, st);
    expect(loadLocal(1, st)).toBeNull();
    expect(loadLocal(2, st)?.rev).toBe(1);
    clearLocal(2, st);
    expect(st.length).toBe(0);
    st.setItem("steplabel:draft:9", "{not json");
    expect(loadLocal(9, st)).toBeNull();
  });

  it("picks the newer draft, local on a tie, and ignores junk", () => {
    expect(pickDraft(draft(2, "a"), draft(3, "b"))?.key).toBe("b");
    expect(pickDraft(draft(3, "a"), draft(3, "b"))?.key).toBe("a");
    expect(pickDraft(null, draft(1, "b"))?.key).toBe("b");
    expect(pickDraft(draft(1, "a"), { rev: 9 })?.key).toBe("a");
    expect(pickDraft(null, null)).toBeNull();
    expect(isDraft({ ...draft(1), key: "" })).toBe(false);
  });

  it("tells another tab's save or removal of this assignment's draft from anything else", () => {
    const saved = JSON.stringify(draft(4));
    expect(otherTabChange(storageKey(7), saved, 7)).toBe("edited");
    expect(otherTabChange(storageKey(7), null, 7)).toBe("finished");
    expect(otherTabChange(storageKey(8), saved, 7)).toBeNull(); // another assignment
    expect(otherTabChange("theme", saved, 7)).toBeNull();
    expect(otherTabChange(storageKey(7), "{not json", 7)).toBeNull();
    expect(otherTabChange(null, null, 7)).toBeNull(); // localStorage.clear() elsewhere
  });
});
