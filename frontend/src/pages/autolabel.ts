/**
 * The Data page's "Label automatically" form: starts an autolabel job through the autolabel API
 * (the endpoint scripts use), then follows its progress until it ends, with the API's reasons.
 */
import { getJson, postJson, sleep } from "./http";
import { JobBox } from "./job";

interface AutolabelConfig {
  autolabel_url: string;
  /** A job's URL with `{id}` in place of its id. */
  autolabel_job_url: string;
  csrf_token: string;
}

interface AutolabelJob {
  id: number;
  status: "created" | "running" | "failed" | "succeeded";
  solutions_total: number;
  solutions_done: number;
  steps_labeled: number;
  completions_used: number;
  retries: number;
  error: string;
}

const NUMBERS = new Set(["rollouts", "max_tokens", "temperature", "concurrency"]);
const FINAL = new Set(["failed", "succeeded"]);

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

export function startAutolabelForm(root: Document): void {
  const form = root.querySelector<HTMLFormElement>("form[data-autolabel-form]");
  const boxEl = root.querySelector<HTMLElement>("[data-autolabel-status]");
  const configEl = root.getElementById("import-config");
  if (!form || !boxEl || !configEl?.textContent) return;
  const config = JSON.parse(configEl.textContent) as AutolabelConfig;
  const box = new JobBox(boxEl);
  const button = form.querySelector<HTMLButtonElement>("button[type=submit]");
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (button) button.disabled = true;
    void runAutolabel(config, autolabelBody(new FormData(form)), box).finally(() => {
      if (button) button.disabled = false;
    });
  });
}

async function runAutolabel(config: AutolabelConfig, body: Record<string, string | number>, box: JobBox): Promise<void> {
  box.progress("Starting…", null);
  const started = await postJson<AutolabelJob>(config.autolabel_url, config.csrf_token, body);
  if (started.status !== 202 || !started.body) {
    // a 400 names its fields ({"base_url": ["…"]}); a 409 says why in `detail`
    const answer = (started.body ?? {}) as unknown as Record<string, string[] | string>;
    const detail = typeof answer.detail === "string" ? answer.detail : null;
    const problems = Object.entries(answer)
      .filter(([field]) => field !== "detail")
      .map(([field, msgs]) => `${field}: ${[msgs].flat().join(" ")}`);
    box.failed(detail ?? `The job was not started (HTTP ${started.status}).`, problems);
    return;
  }
  let job = started.body;
  const url = config.autolabel_job_url.replace("{id}", String(job.id));
  while (!FINAL.has(job.status)) {
    box.progress(autolabelProgress(job), job.solutions_total ? job.solutions_done / job.solutions_total : null);
    await sleep(1_000);
    const next = await getJson<AutolabelJob>(url);
    if (next.status !== 200 || !next.body) {
      box.failed(`Lost track of job ${job.id} (HTTP ${next.status}); the dashboard shows its outcome.`);
      return;
    }
    job = next.body;
  }
  if (job.status === "failed") {
    box.failed(`Job ${job.id} failed: ${job.error || "see the worker's log"}.`);
    return;
  }
  box.done(
    `Job ${job.id} labeled ${job.solutions_done} solution${job.solutions_done === 1 ? "" : "s"} ` +
      `(${job.steps_labeled} steps, ${job.completions_used} completions). The dashboard compares them with people's labels.`,
  );
}
