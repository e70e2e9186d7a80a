/**
 * The Data page's "Label automatically" form: starts an autolabel job through the autolabel API
 * (the endpoint scripts use), then follows its progress until it ends, with the API's reasons.
 * A job still going when the page opens (a reload, another lead's) is followed too, and while one
 * is followed a Stop button ends it; what it stored stays, and the next job resumes from it.
 */
import { getJson, postJson, sleep } from "./http";
import { h } from "../shared/dom";
import { JobBox } from "./job";

interface AutolabelConfig {
  autolabel_url: string;
  /** A job's URL with `{id}` in place of its id. */
  autolabel_job_url: string;
  /** Its stop URL, `{id}` likewise. */
  autolabel_cancel_url: string;
  csrf_token: string;
}

interface AutolabelJob {
  id: number;
  status: "created" | "running" | "failed" | "succeeded" | "cancelled";
  solutions_total: number;
  solutions_done: number;
  steps_labeled: number;
  completions_used: number;
  retries: number;
  error: string;
}

const NUMBERS = new Set(["rollouts", "max_tokens", "temperature", "concurrency"]);
const FINAL = new Set(["failed", "succeeded", "cancelled"]);

/** The form's values as the autolabel API's JSON body: numbers as numbers, empty fields left out
 * (the API's defaults apply), text as typed (a number field's text too, so the API names it). */
export function autolabelBody(form: FormData): Record<string, string | number> {
  const body: Record<string, string | number> = {};
  for (const [key, value] of form.entries()) {
    if (key === "csrfmiddlewaretoken") continue;
    const text = String(value).trim();
    if (!text) continue;
    body[key] = NUMBERS.has(key) && Number.isFinite(Number(text)) ? Number(text) : text;
  }
  return body;
}

/** What the status line says while a job runs. */
export function autolabelProgress(job: AutolabelJob): string {
  if (job.status === "created") return "Waiting for a worker…";
  const retries = job.retries ? ` · ${job.retries} ${job.retries === 1 ? "retry" : "retries"}` : "";
  return (
    `Labeling… ${job.solutions_done} / ${job.solutions_total} solutions · ` +
    `${job.completions_used} completions${retries}`
  );
}

/** What the status box says once a job has ended. */
export function autolabelOutcome(job: AutolabelJob): { ok: boolean; text: string } {
  const solutions = `${job.solutions_done} solution${job.solutions_done === 1 ? "" : "s"}`;
  if (job.status === "failed") return { ok: false, text: `Job ${job.id} failed: ${job.error || "see the worker's log"}.` };
  if (job.status === "cancelled" && job.solutions_total === 0)
    return { ok: true, text: `Job ${job.id} stopped before a worker took it; nothing was labeled.` };
  if (job.status === "cancelled")
    return {
      ok: true,
      text:
        `Job ${job.id} stopped after ${solutions} of ${job.solutions_total} (${job.completions_used} completions). ` +
        "Its labels stay; Start labeling resumes where it stopped.",
    };
  // A solution whose own final answer is right labels every step + without a rollout: a job of
  // only those never calls the server, so a mistyped address would pass unnoticed
  const untried =
    job.completions_used === 0 && job.steps_labeled > 0
      ? " The model server was not called: every solution's own answer was right, which makes each of its steps +."
      : "";
  return {
    ok: true,
    text:
      `Job ${job.id} labeled ${solutions} (${job.steps_labeled} steps, ${job.completions_used} completions).${untried} ` +
      "The dashboard compares them with people's labels.",
  };
}

/** A refused start, as the status box and the form show it. `fields` are the form's own fields the
 * API named, in its order, with their reasons; `lines` name each field by its label on the form
 * ("Model server: This field is required."), and a reason about no field (409's `detail`, or
 * `solutions: nothing to label`) by itself. */
export interface Refusal {
  message: string;
  lines: string[];
  fields: Array<{ name: string; reasons: string }>;
}

export function refusalOf(status: number, answer: Record<string, unknown>, labelOf: (field: string) => string | null): Refusal {
  const fields: Refusal["fields"] = [];
  const lines: string[] = [];
  for (const [key, value] of Object.entries(answer)) {
    if (key === "detail") continue;
    const reasons = [value].flat(2).map(String).join(" ");
    const label = labelOf(key);
    if (label) {
      fields.push({ name: key, reasons });
      lines.push(`${label}: ${reasons}`);
    } else {
      lines.push(key === "non_field_errors" ? reasons : capitalize(reasons));
    }
  }
  const detail = typeof answer.detail === "string" ? answer.detail : null;
  let message = detail ?? `The job was not started (HTTP ${status}).`;
  if (!detail && fields.length) {
    const which = fields.length === 1 ? "the field marked" : `the ${fields.length} fields marked`;
    message = `The job was not started: correct ${which} above.`;
  } else if (!detail && lines.length) message = "The job was not started.";
  return { message, lines, fields };
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** A form field's input by its name (a radio group's first), or null. */
function fieldInput(form: HTMLFormElement, name: string): HTMLElement | null {
  const found = form.elements.namedItem(name);
  if (found instanceof RadioNodeList) return (found[0] as HTMLElement | undefined) ?? null;
  return found instanceof HTMLElement ? found : null;
}

/** The visible label of one of the form's fields ("Model server" for base_url), or null. */
export function fieldLabel(form: HTMLFormElement, name: string): string | null {
  const input = fieldInput(form, name) as HTMLInputElement | null;
  const label = input?.labels?.[0]?.textContent?.trim();
  return label || null;
}

/** Mark the fields the API refused: aria-invalid, their reasons beside them (as Django renders a
 * form error) and in aria-describedby, and focus on the first; marks of the last refusal go. */
export function markFields(form: HTMLFormElement, fields: Refusal["fields"]): void {
  for (const old of form.querySelectorAll("[data-field-error]")) old.remove();
  for (const input of form.querySelectorAll<HTMLElement>("[data-invalid-by-api]")) {
    input.removeAttribute("aria-invalid");
    const before = input.dataset.describedbyBefore;
    if (before) input.setAttribute("aria-describedby", before);
    else input.removeAttribute("aria-describedby");
    delete input.dataset.invalidByApi;
    delete input.dataset.describedbyBefore;
    input.closest(".sl-field")?.classList.remove("sl-field-error");
  }
  const marked: HTMLElement[] = [];
  for (const { name, reasons } of fields) {
    const input = fieldInput(form, name);
    if (!input) continue;
    const errorId = `${input.id || `autolabel-${name}`}-api-error`;
    const error = h("ul", { class: "errorlist", id: errorId, "data-field-error": "" }, h("li", {}, reasons));
    const wrapper = input.closest(".sl-field");
    if (wrapper) {
      wrapper.classList.add("sl-field-error");
      wrapper.append(error);
    } else input.after(error);
    const before = input.getAttribute("aria-describedby") ?? "";
    input.dataset.invalidByApi = "";
    input.dataset.describedbyBefore = before;
    input.setAttribute("aria-invalid", "true");
    input.setAttribute("aria-describedby", `${before} ${errorId}`.trim());
    marked.push(input);
  }
  // the first in the form's order, whatever order the API named them in
  marked.sort((a, b) => (a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING ? -1 : 1));
  marked[0]?.focus();
}

function fraction(job: AutolabelJob): number | null {
  return job.solutions_total ? job.solutions_done / job.solutions_total : null;
}

export function startAutolabelForm(root: Document): void {
  const form = root.querySelector<HTMLFormElement>("form[data-autolabel-form]");
  const boxEl = root.querySelector<HTMLElement>("[data-autolabel-status]");
  const configEl = root.getElementById("import-config");
  if (!form || !boxEl || !configEl?.textContent) return;
  const config = JSON.parse(configEl.textContent) as AutolabelConfig;
  const follower = new JobFollower(config, new JobBox(boxEl), form);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    void follower.start(autolabelBody(new FormData(form)));
  });
  void follower.resume();
}

/** Starts, follows and stops one job at a time; the Start button waits while one is followed. */
class JobFollower {
  private readonly startButton: HTMLButtonElement | null;
  private readonly stopButton: HTMLButtonElement | null;
  private following: number | null = null;

  constructor(
    private readonly config: AutolabelConfig,
    private readonly box: JobBox,
    private readonly form: HTMLFormElement,
  ) {
    this.startButton = form.querySelector<HTMLButtonElement>("button[type=submit]");
    this.stopButton = form.querySelector<HTMLButtonElement>("button[data-autolabel-stop]");
    this.stopButton?.addEventListener("click", () => void this.stop());
  }

  /** Follow the project's newest job if it still waits or runs (the page was reloaded mid-job);
   * one that has ended is shown as it ended, so a reload does not hide how the last job went. */
  async resume(): Promise<void> {
    const jobs = await getJson<AutolabelJob[]>(this.config.autolabel_url);
    const newest = jobs.status === 200 ? jobs.body?.[0] : undefined;
    if (!newest || this.following !== null) return;
    if (FINAL.has(newest.status)) this.showEnded(newest, "Latest job: ");
    else await this.follow(newest);
  }

  async start(body: Record<string, string | number>): Promise<void> {
    if (this.startButton) this.startButton.disabled = true;
    markFields(this.form, []);
    this.box.progress("Starting…", null);
    const started = await postJson<AutolabelJob>(this.config.autolabel_url, this.config.csrf_token, body);
    if (started.status !== 202 || !started.body) {
      if (this.startButton) this.startButton.disabled = false;
      const answer = (started.body ?? {}) as unknown as Record<string, unknown>;
      const refusal = refusalOf(started.status, answer, (field) => fieldLabel(this.form, field));
      this.box.failed(refusal.message, refusal.lines);
      markFields(this.form, refusal.fields);
      return;
    }
    await this.follow(started.body);
  }

  private async follow(first: AutolabelJob): Promise<void> {
    let job = first;
    this.following = job.id;
    this.setGoing(true);
    const url = this.config.autolabel_job_url.replace("{id}", String(job.id));
    try {
      while (!FINAL.has(job.status)) {
        this.box.progress(autolabelProgress(job), fraction(job));
        await sleep(1_000);
        const next = await getJson<AutolabelJob>(url);
        if (next.status !== 200 || !next.body) {
          this.box.failed(`Lost track of job ${job.id} (HTTP ${next.status}); the dashboard shows its outcome.`);
          return;
        }
        job = next.body;
      }
      this.showEnded(job);
    } finally {
      this.following = null;
      this.setGoing(false);
    }
  }

  private showEnded(job: AutolabelJob, prefix = ""): void {
    const outcome = autolabelOutcome(job);
    const text = prefix + outcome.text;
    if (job.status === "cancelled") this.box.stopped(text, fraction(job) ?? 0);
    else if (outcome.ok) this.box.done(text);
    else this.box.failed(text);
  }

  private async stop(): Promise<void> {
    const id = this.following;
    if (id === null) return;
    if (this.stopButton) this.stopButton.disabled = true;
    const url = this.config.autolabel_cancel_url.replace("{id}", String(id));
    const answer = await postJson<AutolabelJob>(url, this.config.csrf_token, {});
    if (answer.status !== 200) {
      // 409: it ended meanwhile; the follow loop shows how
      if (this.stopButton) this.stopButton.disabled = false;
      const detail = (answer.body as { detail?: string } | null)?.detail;
      if (detail) this.box.progress(detail, null);
    }
  }

  private setGoing(going: boolean): void {
    if (this.startButton) this.startButton.disabled = going;
    if (this.stopButton) {
      this.stopButton.hidden = !going;
      this.stopButton.disabled = false;
    }
  }
}
