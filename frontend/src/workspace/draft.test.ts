import { describe, expect, it } from "vitest";

import { compareDrafts, type Draft, isDraft, LocalDrafts, otherTabChange, pickDraft, stepDrafts } from "./draft";
import { MemoryStorage } from "./memory_storage.testing";

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
    const local = new LocalDrafts("steplabel:draft:", st);
    local.save(1, draft(3));
    local.save(2, draft(1));
    expect(local.load(1)?.rev).toBe(3);
    local.prune(2, "algebra");
    expect(local.load(1)).toBeNull();
    expect(local.load(2)?.rev).toBe(1);
    local.clear(2);
    expect(st.length).toBe(0);
    st.setItem("steplabel:draft:9", "{not json");
    expect(local.load(9)).toBeNull();
  });

  it("keeps each page's drafts apart: one page's prune leaves the other's", () => {
    const st = new MemoryStorage();
    const steps = new LocalDrafts("steplabel:draft:", st);
    const pairs = new LocalDrafts("steplabel.compare.", st);
    steps.save(1, draft(1, "s"));
    pairs.save(2, draft(1, "c"));
    steps.prune(3, "algebra");
    expect(pairs.load(2)?.key).toBe("c");
    pairs.prune(4, "algebra");
    expect(st.length).toBe(0);
    expect([stepDrafts.key(5), compareDrafts.key(5)]).toEqual(["steplabel:draft:5", "steplabel.compare.5"]);
  });

  it("prunes only its own project's drafts (and those that name none); another project's stay", () => {
    const st = new MemoryStorage();
    const local = new LocalDrafts("steplabel:draft:", st);
    local.save(1, { ...draft(1, "mine"), project: "algebra" });
    local.save(2, { ...draft(1, "theirs"), project: "geometry" });
    local.save(3, draft(1, "older")); // saved before drafts named their project
    local.save(4, { ...draft(1, "shown"), project: "algebra" });
    st.setItem("steplabel:draft:5", "{not json");
    expect(local.others(4, "algebra").map((o) => [o.id, o.draft?.key ?? null])).toEqual([
      ["1", "mine"],
      ["3", "older"],
      ["5", null],
    ]);
    expect(local.others(null, "algebra").map((o) => o.id)).toEqual(["1", "3", "4", "5"]);
    local.prune(4, "algebra", (id) => id === "1");
    expect([1, 2, 3, 4].map((id) => local.load(id)?.key ?? null)).toEqual(["mine", "theirs", null, "shown"]);
    expect(st.getItem("steplabel:draft:5")).toBeNull();
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
    expect(otherTabChange(stepDrafts.key(7), saved, 7)).toBe("edited");
    expect(otherTabChange(stepDrafts.key(7), null, 7)).toBe("finished");
    expect(otherTabChange(stepDrafts.key(8), saved, 7)).toBeNull(); // another assignment
    expect(otherTabChange("theme", saved, 7)).toBeNull();
    expect(otherTabChange(stepDrafts.key(7), "{not json", 7)).toBeNull();
    expect(otherTabChange(null, null, 7)).toBeNull(); // localStorage.clear() elsewhere
    expect(otherTabChange(compareDrafts.key(7), saved, 7)).toBeNull(); // the compare page's own
  });
});
