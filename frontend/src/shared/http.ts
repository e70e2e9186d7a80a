/**
 * The one HTTP helper of the workspace and the dashboard: same-origin session requests with
 * Django's CSRF header on writes, JSON in and out, and DRF error bodies turned into one message.
 */

export interface ApiResult<T = unknown> {
  status: number;
  data: T | null;
}

export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

/** A non-2xx answer (or a network failure, status 0), with the server's message. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly data: unknown,
  ) {
    super(errorMessage(status, data));
  }
}

/** The most useful human-readable message in a DRF error body ("detail", a field's first error, ...). */
export function errorMessage(status: number, data: unknown): string {
  if (data && typeof data === "object") {
    const d = data as Record<string, unknown>;
    for (const key of ["detail", "message", "error", "non_field_errors"]) {
      const v = d[key];
      if (typeof v === "string") return v;
      if (Array.isArray(v) && typeof v[0] === "string") return v.join(" ");
    }
    const first = Object.entries(d)[0];
    if (first) return `${first[0]}: ${JSON.stringify(first[1])}`;
  }
  return `The server answered ${status}.`;
}

export function readCookie(name: string, cookie: string = document.cookie): string | null {
  for (const part of cookie.split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === name) return decodeURIComponent(v.join("="));
  }
  return null;
}

export class Http {
  constructor(
    /** Prefix of every path (the API base, e.g. "/api/v1/"); "" for absolute URLs. */
    private readonly base: string,
    /** The token Django put in the page, used when the csrftoken cookie cannot be read. */
    private readonly csrfFallback: string,
    private readonly fetchImpl: FetchLike = (i, init) => fetch(i, init),
  ) {}

  private csrf(): string {
    const cookie = typeof document === "undefined" ? null : readCookie("csrftoken");
    return cookie ?? this.csrfFallback;
  }

  /** Send a request; any HTTP status resolves (network failures reject). */
  async request<T = unknown>(
    method: string,
    path: string,
    body?: unknown,
    opts: { keepalive?: boolean } = {},
  ): Promise<ApiResult<T>> {
    const headers: Record<string, string> = { Accept: "application/json" };
    if (method !== "GET") {
      headers["X-CSRFToken"] = this.csrf();
      headers["Content-Type"] = "application/json";
    }
    const resp = await this.fetchImpl(this.base + path, {
      method,
      headers,
      credentials: "same-origin",
      keepalive: opts.keepalive,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    let data: T | null = null;
    if (resp.status !== 204) {
      const text = await resp.text();
      if (text) {
        try {
          data = JSON.parse(text) as T;
        } catch {
          data = null;
        }
      }
    }
    return { status: resp.status, data };
  }

  /** A 2xx answer's body, or an HttpError with the server's message. */
  async json<T>(method: string, path: string, body?: unknown): Promise<T> {
    const r = await this.request<T>(method, path, body);
    if (r.status < 200 || r.status >= 300 || r.data === null) throw new HttpError(r.status, r.data);
    return r.data;
  }
}
