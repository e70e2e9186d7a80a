import { afterEach, describe, expect, it, vi } from "vitest";

import {
  Dashboard,
  disagreementsNote,
  firstErrorText,
  repeatedClick,
  retrainNote,
  runEndedNote,
  savingsText,
  stepsRatedFigure,
  wrongAnswerFigure,
} from "./app";
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
  focused = false;
  focus(): void {
    this.focused = true;
  }
}

function page() {
  const els = {
    '[data-action="retrain"]': new FakeElement(),
    '[data-slot="retrain-message"]': new FakeElement(),
    '[data-slot="meta"]': new FakeElement(),
    '[data-slot="runs-message"]': new FakeElement(),
  };
  const root = { querySelector: (selector: keyof typeof els) => els[selector] ?? null } as unknown as HTMLElement;
  const config = {
    urls: { stats: "/api/v1/projects/p/stats/", training_runs: "/api/v1/projects/p/training-runs/" },
    csrf_token: "t",
  } as unknown as DashboardConfig;
  return {
    dashboard: new Dashboard(root, config),
    button: els['[data-action="retrain"]'],
    message: els['[data-slot="retrain-message"]'],
    runsMessage: els['[data-slot="runs-message"]'],
  };
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

  it("says when the request joined a run instead of starting one", async () => {
    const { dashboard, message } = page();
    vi.stubGlobal(
      "fetch",
      vi.fn((_url: string, init?: RequestInit) =>
        Promise.resolve(
          init?.method === "POST"
            ? new Response(JSON.stringify({ id: 4, status: "running", merged: true }), { status: 202 })
            : new Response("{}", { status: 503 }),
        ),
      ),
    );
    await dashboard.retrain();
    expect(message.textContent).toBe("Joined training run #4 (running): it covers these labels, so no second run.");
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

describe("stepsRatedFigure", () => {
  it("leaves out the steps shown without a rating and says how many", () => {
    expect(stepsRatedFigure(4, 1)).toEqual(["3", "1 more shown without a rating"]);
    expect(stepsRatedFigure(1200, 0)).toEqual(["1,200", undefined]);
  });
});

describe("wrongAnswerFigure", () => {
  it("gives the share among graded solutions and says how many were not graded", () => {
    const all = { labeled_solutions: 61, wrong: 4, correct: 0, ungraded: 57, share: 4 / 61 };
    expect(wrongAnswerFigure(all)).toEqual([
      "100.0%",
      "4 of 4 graded labeled solutions; 57 of 61 not graded (no final answer or ground truth read)",
    ]);
    expect(wrongAnswerFigure({ ...all, wrong: 3, correct: 9, ungraded: 0, labeled_solutions: 12 })).toEqual([
      "25.0%",
      "3 of 12 graded labeled solutions",
    ]);
    expect(wrongAnswerFigure({ ...all, wrong: 0, ungraded: 61 })[0]).toBe("—");
  });
});

describe("savingsText", () => {
  const base = {
    status: "not_enough_data",
    measure: "first errors found per step label",
    strategy: "value",
    control_share: 0.1,
    max_control_share: 0.5,
    n_control: 4,
    n_strategy: 24,
    n_other: 0,
    control_capacity: 40,
    labels_control: 30,
    labels_strategy: 200,
    errors_control: 1,
    errors_strategy: 9,
    min_control: 20,
    min_strategy: 20,
    labels_saved: null,
    labels_saved_ci: null,
    yield_ratio: null,
    yield_ratio_ci: null,
  };

  it("names only the group that is still short", () => {
    expect(savingsText(base)).toBe(
      "Labels saved vs random: not enough data yet (4 of the 20 control labelings it needs; 10% control share).",
    );
    expect(savingsText({ ...base, n_control: 3, n_strategy: 5 })).toContain(
      "3 of the 20 control labelings it needs and 5 of the 20 it needs from the Value per label order",
    );
  });

  it("says a negative saving as a cost", () => {
    const measured = {
      ...base,
      status: "ok",
      n_control: 25,
      labels_saved: -95,
      labels_saved_ci: [-180, 10],
      yield_ratio: 0.7,
      yield_ratio_ci: [0.4, 1.1],
    };
    // the interval in the estimate's words: no "-180" beside "95 more"
    expect(savingsText(measured)).toContain(
      "Labels saved vs random: none: 95 step labels more than random would have needed " +
        "(95% CI: from 180 more to 10 fewer than random); ",
    );
    expect(savingsText({ ...measured, labels_saved_ci: [-180, -20] })).toContain(
      "none: 95 step labels more than random would have needed (95% CI: 20 to 180 more than random); ",
    );
    expect(savingsText({ ...measured, labels_saved: 40 })).toContain(
      "Labels saved vs random: 40 step labels (95% CI: from 180 more to 10 fewer than random); ",
    );
    expect(savingsText({ ...measured, labels_saved: 211, labels_saved_ci: [35, 366] })).toContain(
      "Labels saved vs random: 211 step labels (95% CI: 35 to 366 fewer than random); ",
    );
    expect(savingsText(measured)).not.toMatch(/-\d/);
  });

  it("has nothing to estimate when the strategy is random itself", () => {
    expect(savingsText(base, "random")).toBe(
      "Labels saved vs random: not applicable, the queue is in random order already.",
    );
    expect(savingsText(base, "uncertainty")).toContain("not enough data yet");
  });

  it("gives both counts when both suffice but there is no estimate yet", () => {
    expect(savingsText({ ...base, n_control: 25 })).toBe(
      "Labels saved vs random: not enough data yet (25 control labelings and 24 from the Value per label order; 10% control share).",
    );
  });

  it("leaves out labels an earlier order served, and says so", () => {
    expect(savingsText({ ...base, strategy: "uncertainty", n_strategy: 2, n_other: 11 })).toBe(
      "Labels saved vs random: not enough data yet (4 of the 20 control labelings it needs and 2 of the 20 it " +
        "needs from the Uncertainty order; 10% control share). 11 labelings served by an earlier order or the cold " +
        "start are not counted.",
    );
  });

  it("says when the queue can never give enough control labelings", () => {
    expect(savingsText({ ...base, n_control: 2, control_capacity: 8 })).toBe(
      "Labels saved vs random: no estimate possible in this queue: at its 10% control share it can give about " +
        "8 control labelings in all (those done and its share of the labels still to go), and the estimate needs 20. " +
        "Raise the control share or import more solutions.",
    );
    expect(savingsText({ ...base, control_share: 0.5, n_control: 7, control_capacity: 9 })).toContain(
      "needs 20. Import more solutions (the share is at its most).",
    );
    expect(savingsText({ ...base, n_control: 0, control_capacity: 1 })).toContain("about 1 control labeling in all");
  });
});

describe("retrainNote", () => {
  it("says when there was nothing new to train on, a joined run, or a new one", () => {
    expect(retrainNote({ id: 7, status: "succeeded", merged: true })).toBe(
      "No new labels since training run #7, the active model: nothing new to train on, so no run.",
    );
    expect(retrainNote({ id: 8, status: "running", merged: true })).toContain("Joined training run #8 (running)");
    expect(retrainNote({ id: 9, status: "created", merged: false })).toBe("Training run #9 created.");
  });
});

describe("runEndedNote", () => {
  it("says how the followed run ended, and whether it now serves the queue", () => {
    expect(runEndedNote({ id: 7, status: "succeeded" }, 7)).toBe(
      "Training run #7 succeeded: it is the active model and the queue follows it.",
    );
    expect(runEndedNote({ id: 7, status: "succeeded" }, 6)).toBe("Training run #7 succeeded.");
    expect(runEndedNote({ id: 8, status: "failed" }, 6)).toBe("Training run #8 failed: its error is in the runs table.");
  });
});

describe("the two notes of the model section", () => {
  it("a rollback clears the note that called the run it replaced the active model", async () => {
    const { dashboard, message, runsMessage } = page();
    vi.stubGlobal(
      "fetch",
      vi.fn((_url: string, init?: RequestInit) =>
        Promise.resolve(init?.method === "POST" ? new Response("{}", { status: 200 }) : new Response("{}", { status: 503 })),
      ),
    );
    message.textContent = "Training run #4 succeeded: it is the active model and the queue follows it.";
    const pressed = Object.assign(new FakeElement(), { dataset: { activate: "2" } });
    await (dashboard as unknown as { activate(b: unknown): Promise<void> }).activate(pressed);
    expect(runsMessage.textContent).toContain("Run #2 is the active model");
    expect(message.textContent).toBe("");
    expect(runsMessage.focused).toBe(true); // the redrawn table took the pressed button away
  });

  it("Retrain now clears the rollback's note, which its run will make untrue", async () => {
    const { dashboard, runsMessage } = page();
    const { release } = heldFetch();
    runsMessage.textContent = "Run #2 is the active model: the queue is being reordered with it.";
    const done = dashboard.retrain();
    await Promise.resolve();
    release();
    await done;
    expect(runsMessage.textContent).toBe("");
  });

  it("a followed run that a rollback held back says so when it ends", () => {
    const note = "Not activated: a lead made run #1 the active model while this run waited or trained.";
    expect(runEndedNote({ id: 3, status: "succeeded", note }, 1)).toBe(`Training run #3 succeeded. ${note}`);
  });
});

describe("the disagreements note", () => {
  const row = { solution: 1, problem: "p", n_steps: 3, answer_correct: null, labels: [] };
  it("says what an overlap of 1 leaves to compare", () => {
    expect(disagreementsNote({ solutions_compared: 0, disagreeing: 0, shown: [] })).toMatch(/^No solution has two labels yet/);
  });
  it("says when every solution labeled twice agrees", () => {
    expect(disagreementsNote({ solutions_compared: 12, disagreeing: 0, shown: [] })).toBe(
      "The labels agree on the first error on all 12 solutions labeled twice or more.",
    );
  });
  it("counts the disagreeing ones and says how many are listed when not all are", () => {
    const note = disagreementsNote({ solutions_compared: 80, disagreeing: 60, shown: Array(50).fill(row) });
    expect(note).toContain("60 of 80 solutions labeled twice or more put the first error at different steps.");
    expect(note).toContain("The 50 most recently labeled are below.");
    expect(disagreementsNote({ solutions_compared: 3, disagreeing: 2, shown: [row, row] })).not.toContain("most recently");
  });
  it("reads a first error as a step, or none", () => {
    expect(firstErrorText(2)).toBe("step 2");
    expect(firstErrorText(null)).toBe("none");
  });
});
