/**
 * The HTTP API of DESIGN.md as the workspace uses it, and a submit that retries with backoff until
 * the server acknowledges it.
 */
import type { Mode, SubmitPayload, TaskStep } from "../labeling/state";
import { type ApiResult, errorMessage, Http, HttpError } from "../shared/http";

export interface Task {
  assignmentId: number | string;
  leaseExpiresAt: string | null;
  mode: Mode;
  problem: { text: string; groundTruthAnswer: string | null };
  steps: TaskStep[];
  draft: unknown;
  raw: Record<string, unknown>;
}

/** The workspace's endpoints, on the shared HTTP helper (session auth, CSRF, DRF errors). */
export class Api extends Http {
  /** Claim (or get back) the caller's task; null when the queue is empty (204). */
  async nextTask(slug: string): Promise<Task | null> {
    const r = await this.request<Record<string, unknown>>("GET", `projects/${encodeURIComponent(slug)}/tasks/next/`);
    if (r.status === 204) return null;
    if (r.status !== 200 || !r.data) throw new HttpError(r.status, r.data);
    return parseTask(r.data);
  }

  async me(slug: string): Promise<Record<string, unknown> | null> {
    const r = await this.request<Record<string, unknown>>("GET", `projects/${encodeURIComponent(slug)}/me/`);
    return r.status === 200 ? r.data : null;
  }

  heartbeat(id: Task["assignmentId"]): Promise<ApiResult> {
    return this.request("POST", `assignments/${id}/heartbeat/`, {});
  }

  /** The body is the draft itself; tasks/next returns it as `draft`. */
  saveDraft(id: Task["assignmentId"], draft: unknown): Promise<ApiResult> {
    return this.request("PUT", `assignments/${id}/draft/`, draft);
  }

  skip(id: Task["assignmentId"]): Promise<ApiResult> {
    return this.request("POST", `assignments/${id}/skip/`, {});
  }

  submit(id: Task["assignmentId"], payload: SubmitPayload): Promise<ApiResult<Record<string, unknown>>> {
    return this.request("POST", `assignments/${id}/submit/`, payload);
  }
}

/** Normalize a tasks/next (or submit's next task) body; tolerant of `id` vs `assignment_id`. */
export function parseTask(d: Record<string, unknown>): Task {
  const assignment = (d.assignment ?? {}) as Record<string, unknown>;
  const id = (d.assignment_id ?? assignment.id ?? d.id) as number | string | undefined;
  if (id === undefined || id === null) throw new Error("task without an assignment id");
  const problem = (d.problem ?? {}) as Record<string, unknown>;
  const solution = (d.solution ?? {}) as Record<string, unknown>;
  const rawSteps = (d.steps ?? solution.steps ?? []) as Record<string, unknown>[];
  const steps: TaskStep[] = rawSteps.map((st, i) => {
    const alts = st.alternatives;
    const step: TaskStep = { index: typeof st.index === "number" ? st.index : i, text: String(st.text ?? "") };
    if (Array.isArray(alts) && alts.length > 0) {
      step.alternatives = alts.map((a) => (typeof a === "string" ? a : String((a as { text?: unknown }).text ?? "")));
    }
    return step;
  });
  const mode = (d.mode ?? d.labeling_mode) === "phase1" ? "phase1" : "phase2";
  const gta = problem.ground_truth_answer;
  return {
    assignmentId: id,
    leaseExpiresAt: (d.lease_expires_at ?? assignment.lease_expires_at ?? null) as string | null,
    mode,
    problem: {
      text: String(problem.text ?? problem.problem ?? ""),
      groundTruthAnswer: typeof gta === "string" && gta.trim() !== "" ? gta : null,
    },
    steps,
    draft: d.draft ?? assignment.draft ?? null,
    raw: d,
  };
}

export type SubmitOutcome =
  | { ok: true; status: number; data: Record<string, unknown> | null }
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
  send: () => Promise<ApiResult<Record<string, unknown>>>,
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
