import { afterEach, describe, expect, it, vi } from "vitest";

import { Dashboard, repeatedClick } from "./app";
import type { DashboardConfig } from "./types";

/** The few elements retrain() touches: the button, its message and the statistics' meta line. */
class FakeElement {
  disabled = false;
  textContent = "";
  readonly attributes = new Map<string, string>();
  readonly classes = new Set<string>();
  readonly classList = {
    add: (name: string) => void this.classes.add(name),
    remove: (name: string) => void this.classes.delete(name),
  };
  setAttribute(name: string, value: string): void {
    this.attributes.set(name, value);
  }
  removeAttribute(name: string): void {
    this.attributes.delete(name);
  }
}

function page() {
  const els = {
    '[data-action="retrain"]': new FakeElement(),
    '[data-slot="retrain-message"]': new FakeElement(),
    '[data-slot="meta"]': new FakeElement(),
  };
  const root = { querySelector: (selector: keyof typeof els) => els[selector] ?? null } as unknown as HTMLElement;
  const config = {
    urls: { stats: "/api/v1/projects/p/stats/", training_runs: "/api/v1/projects/p/training-runs/" },
    csrf_token: "t",
  } as unknown as DashboardConfig;
  return { dashboard: new Dashboard(root, config), button: els['[data-action="retrain"]'], message: els['[data-slot="retrain-message"]'] };
}

/** fetch that holds every POST until release() and refuses the statistics reload (load() then stops). */
function heldFetch() {
  const posts: Array<(r: Response) => void> = [];
  const fetchMock = vi.fn((_url: string, init?: RequestInit) => {
    if (init?.method === "POST") return new Promise<Response>((resolve) => posts.push(resolve));
    return Promise.resolve(new Response("{}", { status: 503 }));
  });
  vi.stubGlobal("fetch", fetchMock);
  const release = () =>
    posts.shift()!(new Response(JSON.stringify({ id: 3, status: "created", merged: false }), { status: 202 }));
  return { fetchMock, posts, release };
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("Retrain now", () => {
  it("sends one request however often it is pressed while one is in flight", async () => {
    const { dashboard, button, message } = page();
    const { fetchMock, posts, release } = heldFetch();
    const first = dashboard.retrain();
    const second = dashboard.retrain(); // a double click, or Enter held down
    expect(second).toBe(first);
    expect(button.disabled).toBe(true);
    expect(button.attributes.get("aria-busy")).toBe("true");
    await Promise.resolve();
    expect(posts).toHaveLength(1);
    release();
    await first;
    expect(fetchMock.mock.calls.filter(([, init]) => init?.method === "POST")).toHaveLength(1);
    expect(message.textContent).toBe("Training run #3 created.");
    expect(button.disabled).toBe(false);
    expect(button.attributes.has("aria-busy")).toBe(false);

    // Once it has ended, the next press posts again.
    const again = dashboard.retrain();
    expect(again).not.toBe(first);
    await Promise.resolve();
    expect(posts).toHaveLength(1);
    release();
    await again;
    expect(fetchMock.mock.calls.filter(([, init]) => init?.method === "POST")).toHaveLength(2);
  });

  it("enables the button again after a refusal", async () => {
    const { dashboard, button, message } = page();
    vi.stubGlobal(
      "fetch",
      vi.fn(() => Promise.resolve(new Response(JSON.stringify({ detail: "Only leads." }), { status: 403 }))),
    );
    await dashboard.retrain();
    expect(message.textContent).toBe("Retrain failed: 403: Only leads.");
    expect(message.classes.has("sl-error")).toBe(true);
    expect(button.disabled).toBe(false);
  });
});

describe("repeatedClick", () => {
  it("is the second click of a double click, never a single click or a key press", () => {
    expect(repeatedClick({ detail: 1 })).toBe(false);
    expect(repeatedClick({ detail: 0 })).toBe(false); // Enter or Space on the button
    expect(repeatedClick({ detail: 2 })).toBe(true);
    expect(repeatedClick({ detail: 3 })).toBe(true);
  });
});
