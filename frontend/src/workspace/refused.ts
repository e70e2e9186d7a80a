/**
 * Submits the server refused (they arrived after the lease expired and someone else had taken the
 * solution): given back by GET /me/ so the annotator sees the work was not recorded and what it was.
 */
import type { RefusedSubmit } from "../api/types";
import { renderMarkdown } from "../render/markdown";
import { h, setRendered } from "../shared/dom";

const RATING_NAMES: Record<string, string> = { "-1": "Negative", "0": "Neutral", "1": "Positive" };

/** Text the annotator wrote, quoted and cut short (a note names it so it can be written again). */
export function quoteShort(text: string): string {
  return `“${text.length > 120 ? `${text.slice(0, 119)}…` : text}”`;
}

/** "Step 1 Positive · Step 2 Negative (flagged), 1 alternative · finish: found error". */
export function summarizeSubmit(submit: unknown): string {
  if (!submit || typeof submit !== "object") return "no labels";
  const body = submit as { steps?: unknown; finish_reason?: unknown; reason?: unknown };
  const steps = Array.isArray(body.steps) ? body.steps : [];
  const parts = steps.map((raw, i) => {
    const st = (raw ?? {}) as {
      index?: unknown;
      rating?: unknown;
      flagged?: unknown;
      alternatives?: unknown;
      critique?: unknown;
    };
    const n = typeof st.index === "number" ? st.index + 1 : i + 1;
    const rating = RATING_NAMES[String(st.rating)] ?? "unrated";
    const alts = Array.isArray(st.alternatives) ? st.alternatives.length : 0;
    // the written critique is work too: shown (cut short) so it can be written again
    const critique = typeof st.critique === "string" ? st.critique.trim() : "";
    const extra = [
      st.flagged === true ? " (flagged)" : "",
      alts ? `, ${alts} alternative${alts === 1 ? "" : "s"}` : "",
      critique ? `, critique ${quoteShort(critique)}` : "",
    ];
    return `Step ${n} ${rating}${extra.join("")}`;
  });
  if (typeof body.finish_reason === "string") parts.push(`finish: ${body.finish_reason.replaceAll("_", " ")}`);
  if (typeof body.reason === "string" && body.reason.trim()) parts.push(`reason: “${body.reason.trim()}”`);
  return parts.length ? parts.join(" · ") : "no labels";
}

export class RefusedNotice {
  readonly el = h("section", { class: "sl-refused", "aria-label": "Submits that were not recorded", hidden: true });

  /** `refocus`: where focus goes once the last one is dismissed (the step being rated). */
  constructor(
    private readonly dismiss: (assignmentId: number) => Promise<boolean>,
    private readonly refocus: () => void = () => {},
  ) {}

  show(items: readonly RefusedSubmit[]): void {
    this.el.hidden = items.length === 0;
    this.el.replaceChildren(
      ...items.map((item) => {
        const button = h("button", { type: "button", class: "sl-btn sl-small" }, "Dismiss");
        const box = h(
          "div",
          { class: "sl-refused-item", "data-assignment": item.assignment_id },
          h("p", { class: "sl-refused-title" }, h("strong", {}, "Not recorded: "), item.message),
          h(
            "p",
            {},
            h("strong", {}, "Problem: "),
            setRendered(h("span", { class: "sl-md" }), renderMarkdown(item.problem, { inline: true })),
          ),
          h("p", {}, h("strong", {}, "Your labels: "), summarizeSubmit(item.submit)),
          button,
        );
        // aria-disabled, not disabled, while it is sent: a disabled button drops focus to the body.
        let sending = false;
        button.addEventListener("click", () => {
          if (sending) return;
          sending = true;
          button.setAttribute("aria-disabled", "true");
          void this.dismiss(item.assignment_id).then((ok) => {
            sending = false;
            button.removeAttribute("aria-disabled");
            if (!ok) return;
            // Focus goes on to the next Dismiss, or back to the work: not to the top of the page.
            const hadFocus = box.contains(document.activeElement);
            const next = (box.nextElementSibling ?? box.previousElementSibling)?.querySelector("button");
            box.remove();
            this.el.hidden = this.el.childElementCount === 0;
            if (!hadFocus) return;
            if (next) next.focus();
            else this.refocus();
          });
        });
        return box;
      }),
    );
  }
}
