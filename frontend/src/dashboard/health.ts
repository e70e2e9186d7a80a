/** The service-health banner: tells the lead when the broker is down and work is waiting. */
import type { Health } from "../api/types";
import { h } from "../shared/dom";
import { Http } from "../shared/http";

export type { Health };

/** The banner text, or null when all is well and nothing waits. */
export function healthMessage(health: Health): string | null {
  const parts: string[] = [];
  // `waiting` comes only to a signed-in caller (the dashboard's lead always is)
  const exports = health.waiting?.exports ?? 0;
  const runs = health.waiting?.training_runs ?? 0;
  if (exports) parts.push(`${exports} export${exports === 1 ? "" : "s"}`);
  if (runs) parts.push(`${runs} training run${runs === 1 ? "" : "s"}`);
  const waiting = parts.length ? ` ${parts.join(" and ")} waiting.` : "";
  if (!health.database) return "The database cannot be reached: the numbers below may be stale.";
  if (!health.broker) {
    return (
      "The task broker is unreachable: labeling goes on, but retraining and exports wait and " +
      `will run by themselves once it is back.${waiting}`
    );
  }
  return null;
}

/** Fetch /api/v1/health/ and show or clear the banner at the top of `root`. */
export async function showServiceHealth(root: HTMLElement, url = "/api/v1/health/"): Promise<void> {
  let message: string | null;
  try {
    const r = await new Http("", "").request<Health>("GET", url);
    message = r.status === 200 && r.data ? healthMessage(r.data) : null;
  } catch {
    message = "The server cannot be reached right now.";
  }
  let banner = root.querySelector<HTMLElement>(".sl-health-banner");
  if (!message) {
    banner?.remove();
    return;
  }
  if (!banner) {
    banner = h("div", { class: "sl-health-banner", role: "status" });
    root.prepend(banner);
  }
  banner.textContent = message;
}
