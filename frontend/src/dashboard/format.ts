/** Pure formatting and data shaping for the dashboard (unit-tested; no DOM). */

export const DASH = "—";

export function fmtInt(n: number | null | undefined): string {
  return n === null || n === undefined ? DASH : Math.round(n).toLocaleString("en-US");
}

export function fmtPct(x: number | null | undefined, digits = 1): string {
  return x === null || x === undefined ? DASH : `${(x * 100).toFixed(digits)}%`;
}

export function fmtNum(x: number | null | undefined, digits = 2): string {
  return x === null || x === undefined ? DASH : x.toFixed(digits);
}

/** Seconds as "8.5 s", "2 min 05 s" or "1 h 02 min". */
export function fmtSeconds(s: number | null | undefined): string {
  if (s === null || s === undefined) return DASH;
  if (s < 60) return `${s.toFixed(1)} s`;
  const total = Math.round(s);
  if (total < 3600) return `${Math.floor(total / 60)} min ${String(total % 60).padStart(2, "0")} s`;
  const minutes = Math.round(total / 60);
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, "0")} min`;
}

/** The queue's ETA: hours at the current pace; null when nothing was labeled lately. */
export function fmtEta(hours: number | null | undefined, remaining: number): string {
  if (remaining === 0) return "queue done";
  if (hours === null || hours === undefined) return "no labels in the last 7 days";
  if (hours < 1) return `about ${Math.max(1, Math.round(hours * 60))} min`;
  if (hours < 48) return `about ${hours.toFixed(hours < 10 ? 1 : 0)} h`;
  return `about ${(hours / 24).toFixed(hours < 240 ? 1 : 0)} days`;
}

export function toUnixSeconds(isoTimes: readonly string[]): number[] {
  return isoTimes.map((t) => Date.parse(t) / 1000);
}

export interface Named {
  annotator: string;
  labels: number[];
}

/** The k busiest annotators of a series (the API sorts them, busiest first), skipping idle ones. */
export function busiest(rows: readonly Named[], k: number): Named[] {
  return rows.filter((r) => r.labels.some((n) => n > 0)).slice(0, k);
}

export function generationName(g: number | null): string {
  return g === null ? "none" : `gen ${g}`;
}

/** Share of each value in the total, for bar legends: [[label, value, share]]. */
export function shares(labels: readonly string[], values: readonly number[]): [string, number, number | null][] {
  const total = values.reduce((a, b) => a + b, 0);
  return labels.map((label, i) => [label, values[i] ?? 0, total ? (values[i] ?? 0) / total : null]);
}

export const METRIC_NAMES: Record<string, string> = {
  auroc_negative: "AUROC (−1 steps)",
  accuracy: "Step accuracy",
  first_error_f1: "First-error F1",
  ece: "ECE (lower is better)",
};
