/** The side panel's "Your progress today", from GET /projects/{slug}/me/. */
import type { MyProgress } from "../api/types";
import { h } from "../shared/dom";

export function formatDuration(ms: number): string {
  if (ms < 60_000) return `${Math.round(ms / 1000)} s`;
  const min = Math.round(ms / 60_000);
  return min >= 60 ? `${Math.floor(min / 60)} h ${min % 60} min` : `${min} min`;
}

export function renderProgress(panel: HTMLElement, me: MyProgress): void {
  const rows: [string, string][] = [
    ["Solutions today", String(me.solutions_today)],
    ["Steps today", String(me.steps_today)],
    ["Active time today", formatDuration(me.time_today_ms)],
    ["Solutions in all", String(me.solutions_total)],
  ];
  const screening = me.screening;
  if (screening.required > 0 && screening.status !== "not_required") {
    rows.push(["Screening", `${screening.status} (${screening.submitted} of ${screening.required})`]);
  }
  panel.replaceChildren(...rows.flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
}

/** A compare project's "Your progress": its labels are pairs answered, not solutions or steps. */
export function renderPairProgress(panel: HTMLElement, me: MyProgress): void {
  const rows: [string, string][] = [
    ["Pairs today", String(me.pairs_today)],
    ["Active time today", formatDuration(me.time_today_ms)],
    ["Pairs in all", String(me.pairs_total)],
  ];
  panel.replaceChildren(...rows.flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
}
