/**
 * The HTTP API of DESIGN.md as the workspace uses it, and a submit that retries with backoff until
 * the server acknowledges it.
 */
import type { Mode, StepType, SubmitPayload, TaskStep } from "../labeling/state";
import type { MyProgress, SkipOut, SubmitOut, TaskOut } from "../api/types";
import { type ApiResult, errorMessage, Http, HttpError } from "../shared/http";

export type TaskKind = "math" | "code" | "trace";

/** A served task as the workspace holds it. */
export interface Task {
  assignmentId: number;
  mode: Mode;
  problem: { text: string; groundTruthAnswer: string | null };
  steps: TaskStep[];
  draft: unknown;
  /** What the solution is: math (default), code in `language` with optional `tests`, or an agent trace. */
  kind: TaskKind;
  language: string;
  tests: string | null;
  critiqueRequired: boolean;
}

/** The workspace's endpoints, on the shared HTTP helper (session auth, CSRF, DRF errors). */
export class Api extends Http {
  /** Claim (or get back) the caller's task; null when the queue is empty (204). */
  async nextTask(slug: string): Promise<Task | null> {
    const r = await this.request<TaskOut>("GET", `projects/${encodeURIComponent(slug)}/tasks/next/`);
    if (r.status === 204) return null;
    if (r.status !== 200 || !r.data) throw new HttpError(r.status, r.data);
    return parseTask(r.data);
  }

  async me(slug: string): Promise<MyProgress | null> {
    const r = await this.request<MyProgress>("GET", `projects/${encodeURIComponent(slug)}/me/`);
    return r.status === 200 ? r.data : null;
  }

  heartbeat(id: number): Promise<ApiResult> {
    return this.request("POST", `assignments/${id}/heartbeat/`, {});
  }

  /** The body is the draft itself; tasks/next returns it as `draft`. `keepalive` outlives the page. */
  saveDraft(id: number, draft: unknown, keepalive = false): Promise<ApiResult> {
    return this.request("PUT", `assignments/${id}/draft/`, draft, { keepalive });
  }

  skip(id: number): Promise<ApiResult<SkipOut>> {
    return this.request("POST", `assignments/${id}/skip/`, {});
  }

  submit(id: number, payload: SubmitPayload): Promise<ApiResult<SubmitOut>> {
    return this.request("POST", `assignments/${id}/submit/`, payload);
  }
}

/** The workspace's view of a served task (GET tasks/next/, or `next` of a submit or skip). */
export function parseTask(d: TaskOut): Task {
  const gta = d.problem.ground_truth_answer;
  return {
    assignmentId: d.id,
    mode: d.mode === "phase1" ? "phase1" : "phase2",
    problem: { text: d.problem.text, groundTruthAnswer: gta && gta.trim() !== "" ? gta : null },
    steps: (d.steps ?? []).map((st) => {
      const step: TaskStep = { index: st.index, text: st.text };
      if (st.type) step.type = st.type as StepType;
      if (st.rated === false) step.rated = false;
      return step;
    }),
    draft: d.draft ?? null,
    kind: d.kind === "code" || d.kind === "trace" ? d.kind : "math",
    language: d.language ?? "",
    tests: d.tests ?? null,
    critiqueRequired: d.critique_required === true,
  };
}

/**
 * Whether the server says the assignment is over for this annotator with nothing of theirs left
 * to keep on it: not theirs (404), or already submitted or skipped (409), in another tab or
 * before this page was shown (a Back / Forward can show an old copy). Other 409s (the lease ran
 * out and someone else took the solution, a refused submit kept) leave work the page keeps.
 */
export function assignmentFinished(status: number, data: unknown): boolean {
  if (status === 404) return true;
  // the server's machine-readable reason (annotate.services.leases.AssignmentFinished), not its words
  const code = data && typeof data === "object" ? (data as { code?: unknown }).code : null;
  return status === 409 && code === "assignment_finished";
}

export type SubmitOutcome =
  | { ok: true; status: number; data: SubmitOut | null }
  | { ok: false; status: number; data: unknown; message: string };

/** Retry delays in ms: 0.5 s doubling up to 30 s, with jitter so many tabs do not retry in step. */
export function backoffMs(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(30_000, 500 * 2 ** attempt);
  return Math.round(base * (0.75 + 0.5 * random()));
}

/**
 * Submit until acknowledged: network errors, 5xx, 408 and 429 are retried with the same payload
 * (so the same idempotency key) forever; any other answer ends the loop.
 */
export async function submitUntilAcknowledged(
  send: () => Promise<ApiResult<SubmitOut>>,
  opts: { sleep?: (ms: number) => Promise<void>; onRetry?: (attempt: number, why: string) => void } = {},
): Promise<SubmitOutcome> {
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  for (let attempt = 0; ; attempt++) {
    let why: string;
    try {
      const r = await send();
      if (r.status >= 200 && r.status < 300) return { ok: true, status: r.status, data: r.data };
      if (r.status < 500 && r.status !== 408 && r.status !== 429) {
        return { ok: false, status: r.status, data: r.data, message: errorMessage(r.status, r.data) };
      }
      why = `server error ${r.status}`;
    } catch (e) {
      why = e instanceof Error ? e.message : "network error";
    }
    opts.onRetry?.(attempt + 1, why);
    await sleep(backoffMs(attempt));
  }
}

/** An idempotency key: crypto.randomUUID where the context allows it, else a v4 UUID by hand. */
export function newIdempotencyKey(): string {
  if (typeof crypto.randomUUID === "function") return crypto.randomUUID();
  const b = new Uint8Array(16);
  crypto.getRandomValues(b);
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
