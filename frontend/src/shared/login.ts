/**
 * An ended session (it timed out, or the annotator logged out in another tab): the API answers
 * 401. The page says so with a link to the login page, which brings the annotator back to it;
 * work kept in this browser is restored there and can be sent again.
 */
import { h } from "./dom";

/** settings.LOGIN_URL */
export const LOGIN_PATH = "/accounts/login/";

/** The login page, coming back to `here` (a path with its query) once logged in. */
export function loginUrl(here: string): string {
  return `${LOGIN_PATH}?next=${encodeURIComponent(here)}`;
}

/** Whether an answer means the caller is not logged in (DRF's 401; a 403 with its words where
 * no authentication class names a scheme). */
export function loggedOut(status: number, data: unknown): boolean {
  if (status === 401) return true;
  const detail = data && typeof data === "object" ? (data as { detail?: unknown }).detail : null;
  return status === 403 && detail === "Authentication credentials were not provided.";
}

/** "You are logged out — log in again", the link to the login page and back to this page. */
export function loggedOutMessage(lead: string, after: string): HTMLElement {
  const here = `${location.pathname}${location.search}`;
  return h(
    "span",
    { class: "sl-logged-out" },
    `${lead}You are logged out — `,
    h("a", { href: loginUrl(here) }, "log in again"),
    `. ${after}`,
  );
}
