import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

import { DraftSync } from "./autosave";
import { type DraftBase, LocalDrafts } from "./draft";
import { MemoryStorage } from "./memory_storage.testing";

type Fields = { choice: string };
const draft = (rev: number, choice: string): DraftBase & Fields => ({
  v: 1,
  rev,
  saved_at: "",
  key: `key-${choice}`,
  elapsed_ms: 0,
  choice,
});
const ok = { status: 200, data: null };

function setup() {
  const listeners: Record<string, () => void> = {};
  vi.stubGlobal("window", {
    setTimeout: (fn: () => void, ms: number) => setTimeout(fn, ms),
    clearTimeout: (id: number) => clearTimeout(id),
    addEventListener: (ev: string, fn: () => void) => (listeners[ev] = fn),
  });
  vi.stubGlobal("document", { visibilityState: "visible" });
  const api = { saveDraft: vi.fn(async () => ok), heartbeat: vi.fn(async () => ok) };
  const bar: string[] = [];
  const host = {
    choice: "",
    fields: () => ({ choice: host.choice }),
    status: (t: string) => bar.push(t),
    say: vi.fn(),
    fail: vi.fn(),
    loadNext: vi.fn(async () => void sync.begin(2, null)),
    busy: () => false,
  };
  const local = new LocalDrafts("test:", new MemoryStorage());
  const sync = new DraftSync<Fields>(api, host, local, "pair", "algebra");
  return { api, bar, host, local, sync, listeners, last: () => bar[bar.length - 1] };
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

describe("the draft keeper both pages share", () => {
  it("resumes the newer draft by revision: a newer local one goes to the server at once", async () => {
    const { api, local, sync, last } = setup();
    local.save(1, draft(5, "local"));
    const resumed = sync.begin(1, draft(3, "server"));
    expect(resumed?.choice).toBe("local");
    sync.started(resumed, false);
    expect(last()).toBe("Saving…");
    await vi.advanceTimersByTimeAsync(1_500);
    expect(api.saveDraft).toHaveBeenCalledWith(1, expect.objectContaining({ rev: 6, key: "key-local" }), false);
    expect(last()).toBe("Saved");
  });

  it("resumes a newer server draft, which needs no save", async () => {
    const { api, local, sync, last } = setup();
    local.save(1, draft(2, "local"));
    const resumed = sync.begin(1, draft(7, "server"));
    expect(resumed?.choice).toBe("server");
    sync.started(resumed, false);
    expect(last()).toBe("Saved");
    await vi.advanceTimersByTimeAsync(2_000);
    expect(api.saveDraft).not.toHaveBeenCalled();
    expect(local.load(1)?.rev).toBe(8); // the local copy moves past it: a reload resumes it here
  });

  it("sends a change at once, with keepalive, when the page goes away", async () => {
    const { api, host, sync, last } = setup();
    sync.started(sync.begin(1, null), true);
    host.choice = "A";
    sync.persist(true);
    sync.flush(true);
    expect(api.saveDraft).toHaveBeenCalledWith(1, expect.objectContaining({ choice: "A" }), true);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(api.saveDraft).toHaveBeenCalledTimes(1); // the debounced save was cancelled
    expect(last()).toBe("Saved");
  });

  it("saves at least every five seconds while changes keep coming", async () => {
    const { api, host, sync } = setup();
    sync.started(sync.begin(1, null), true);
    await vi.advanceTimersByTimeAsync(1_500); // the key stored
    api.saveDraft.mockClear();
    for (let second = 1; second <= 10; second++) {
      host.choice = `change ${second}`;
      sync.persist(true);
      await vi.advanceTimersByTimeAsync(1_000); // never a 1.5 s pause
    }
    const sent = api.saveDraft.mock.calls.map((call) => (call as unknown as [number, Fields])[1].choice);
    expect(sent).toEqual(["change 5", "change 10"]);
  });

  it("says offline, and saves once the network is back", async () => {
    const { api, host, sync, last, listeners } = setup();
    sync.begin(1, null);
    api.saveDraft.mockRejectedValueOnce(new TypeError("Failed to fetch"));
    host.choice = "B";
    sync.persist(true);
    await vi.advanceTimersByTimeAsync(1_500);
    expect(last()).toBe("Offline: saved in this browser, will retry");
    listeners.online();
    await vi.advanceTimersByTimeAsync(0);
    expect(api.saveDraft).toHaveBeenLastCalledWith(1, expect.objectContaining({ choice: "B" }), false);
    expect(last()).toBe("Saved");
  });

  it("keeps the work here when the assignment is no longer ours, and moves on when it is finished", async () => {
    const { api, host, sync, last } = setup();
    sync.begin(1, null);
    api.saveDraft.mockResolvedValueOnce({ status: 409, data: { detail: "Taken." } } as never);
    sync.persist(true);
    await vi.advanceTimersByTimeAsync(1_500);
    expect(last()).toBe("Saved in this browser");
    expect(host.fail).toHaveBeenCalledWith("Taken.");
    sync.persist(true);
    await vi.advanceTimersByTimeAsync(1_500);
    expect(api.saveDraft).toHaveBeenCalledTimes(1); // no more server saves once gone

    sync.begin(1, null);
    const finished = { status: 409, data: { detail: "Already submitted.", code: "assignment_finished" } };
    api.heartbeat.mockResolvedValueOnce(finished as never);
    await sync.heartbeat();
    await vi.advanceTimersByTimeAsync(0);
    expect(host.loadNext).toHaveBeenCalledTimes(1);
    expect(host.say).toHaveBeenCalledWith("Already submitted. Here is the next pair.");
  });

  it("names the changes this tab held when the task was submitted elsewhere, in an alert", async () => {
    const { api, host } = setup();
    const described = { ...host, describeWork: () => (host.choice ? `chose ${host.choice}` : null) };
    const tab = new DraftSync<Fields>(api, described, new LocalDrafts("t2:", new MemoryStorage()), "pair", "algebra");
    described.loadNext = vi.fn(async () => void tab.begin(2, null));
    tab.begin(1, null);
    host.choice = "B";
    api.saveDraft.mockResolvedValueOnce({
      status: 409,
      data: { detail: "This assignment was already submitted.", code: "assignment_finished" },
    } as never);
    tab.persist(true);
    await vi.advanceTimersByTimeAsync(1_500);
    expect(host.fail).toHaveBeenCalledWith(
      "This assignment was already submitted. Not recorded from this tab: chose B. Here is the next pair.",
    );
    expect(host.say).not.toHaveBeenCalled();
  });

  it("two tabs on one task: one that closes without a change keeps the other's newer work", async () => {
    const { api, host, local, sync: tabA } = setup();
    const hostB = { ...host, choice: "", fields: () => ({ choice: hostB.choice }) };
    const tabB = new DraftSync<Fields>(api, hostB, local, "pair", "algebra");
    tabA.started(tabA.begin(1, null), true);
    tabB.started(tabB.begin(1, null), true);
    await vi.advanceTimersByTimeAsync(1_500); // both keys stored on the server: nothing unsaved
    host.choice = "A";
    tabA.persist(true);
    tabA.persist(true); // two changes in tab A, its server save still debounced
    tabB.flush(true); // tab B reloads or closes: only its clock moved
    expect(local.load<DraftBase & Fields>(1)?.choice).toBe("A");
    // a reload resumes tab A's work over the server's older draft
    const tabC = new DraftSync<Fields>(api, hostB, local, "pair", "algebra");
    expect(tabC.begin(1, { ...draft(2, ""), key: tabA.idempotencyKey })?.choice).toBe("A");
    // a change in tab B is the latest: it is stored past tab A's revision
    const revA = local.storedRev(1);
    hostB.choice = "B";
    tabB.persist(true);
    expect(local.load<DraftBase & Fields>(1)).toMatchObject({ choice: "B", rev: revA + 1 });
  });

  it("says in the bar when a heartbeat finds the lease lost, or the save failed or was logged out", async () => {
    const { api, host, sync, last } = setup();
    sync.begin(1, null);
    api.saveDraft.mockResolvedValueOnce({ status: 401, data: null } as never);
    sync.persist(true);
    await vi.advanceTimersByTimeAsync(1_500);
    expect(last()).toBe("Saved in this browser (you are logged out)");
    api.saveDraft.mockResolvedValueOnce({ status: 500, data: null } as never);
    sync.persist(true);
    await vi.advanceTimersByTimeAsync(1_500);
    expect(last()).toBe("Saved in this browser (server save failed, will retry)");
    api.heartbeat.mockResolvedValueOnce({ status: 410, data: null } as never);
    await sync.heartbeat(); // retries the unsaved draft first
    expect(api.saveDraft).toHaveBeenCalledTimes(3);
    expect(last()).toBe("Saved in this browser");
    expect(host.fail).toHaveBeenCalledWith("Your lease on this pair ended. Your work is kept in this browser.");
  });

  describe("a draft left on another assignment of this project when the next task is shown", () => {
    const LOST = { status: 409, data: { detail: "Your lease expired and another annotator took this solution." } };
    const FINISHED = { status: 409, data: { detail: "This assignment was already submitted.", code: "assignment_finished" } };

    function withWork(answer: { status: number; data: unknown } | Error) {
      const t = setup();
      const host = { ...t.host, leftBehind: (d: DraftBase & Fields) => (d.choice ? `your choice ${d.choice} was not recorded` : null) };
      const sync = new DraftSync<Fields>(t.api, host, t.local, "solution", "algebra");
      if (answer instanceof Error) t.api.heartbeat.mockRejectedValue(answer);
      else t.api.heartbeat.mockResolvedValue(answer as never);
      t.local.save(7, { ...draft(4, "A"), project: "algebra" });
      return { ...t, sync };
    }

    it("says the claim was lost and what was not recorded, then forgets the draft", async () => {
      const { api, host, local, sync } = withWork(LOST);
      sync.begin(9, null);
      await vi.advanceTimersByTimeAsync(0);
      expect(api.heartbeat).toHaveBeenCalledWith(7);
      expect(host.fail).toHaveBeenCalledWith(
        "Your claim on the previous solution expired and it went to someone else; your choice A was not recorded.",
      );
      expect(local.load(7)).toBeNull();
      expect(local.load(9)).toBeNull(); // begin stores nothing; started() does
      host.fail.mockClear();
      sync.begin(10, null); // said once
      await vi.advanceTimersByTimeAsync(0);
      expect(host.fail).not.toHaveBeenCalled();
    });

    it("says nothing new when it was finished elsewhere (submitted or skipped), and forgets it", async () => {
      for (const answer of [FINISHED, { status: 404, data: null }]) {
        const { host, local, sync } = withWork(answer);
        sync.begin(9, null);
        await vi.advanceTimersByTimeAsync(0);
        expect(host.fail).not.toHaveBeenCalled();
        expect(local.load(7)).toBeNull();
      }
    });

    it("keeps it, unsaid, while the server renews it, cannot be reached, or logged the annotator out", async () => {
      for (const answer of [ok, new TypeError("Failed to fetch"), { status: 403, data: null }, { status: 500, data: null }]) {
        const { host, local, sync } = withWork(answer);
        sync.begin(9, null);
        await vi.advanceTimersByTimeAsync(0);
        expect(host.fail).not.toHaveBeenCalled();
        expect(local.load<DraftBase & Fields>(7)?.choice).toBe("A");
      }
    });

    it("asks about the work of this project only; drafts without work go unasked", async () => {
      const { api, host, local, sync } = withWork(LOST);
      local.save(7, { ...draft(4, ""), project: "algebra" }); // only the key: no work
      local.save(8, { ...draft(2, "B"), project: "geometry" }); // another project's tab may be open
      local.save(6, draft(2, "C")); // saved before drafts named their project
      sync.begin(9, null);
      await vi.advanceTimersByTimeAsync(0);
      expect(api.heartbeat).not.toHaveBeenCalled();
      expect(host.fail).not.toHaveBeenCalled();
      expect([6, 7, 8].map((id) => local.load<DraftBase & Fields>(id)?.choice ?? null)).toEqual([null, null, "B"]);
    });

    it("with no task shown drops nothing unasked, yet still tells a lost claim", async () => {
      const { host, local, sync } = withWork(LOST);
      local.save(5, { ...draft(1, ""), project: "algebra" });
      sync.begin(null, null); // the queue is empty, or the claim failed (this may be the current task's)
      await vi.advanceTimersByTimeAsync(0);
      expect(host.fail).toHaveBeenCalledTimes(1);
      expect(local.load(7)).toBeNull();
      expect(local.load(5)).not.toBeNull();
    });

    it("names its project in every draft it saves", () => {
      const { local, sync } = withWork(LOST);
      sync.started(sync.begin(9, null), true);
      expect(local.load(9)?.project).toBe("algebra");
    });
  });
});
