/**
 * The export page: starts an export job through the export API (the same endpoint scripts use),
 * follows its progress, then offers the download and the cursor for the next incremental export.
 */
import { getJson, postJson, sleep } from "./http";
import { JobBox, refreshSection } from "./job";

interface ExportConfig {
  exports_url: string;
  /** An export job's URL with `{id}` in place of its id. */
  export_url: string;
  csrf_token: string;
}

interface ExportJob {
  id: number;
  status: "created" | "running" | "failed" | "succeeded";
  record_count: number;
  byte_size: number;
  error: string;
  cursor: string | null;
  download_url: string | null;
}

const FINAL = new Set(["failed", "succeeded"]);

/** Options that only some formats take (the export API's FORMAT_ONLY, `labels` and `ties`). */
export const FORMAT_ONLY: Readonly<Record<string, readonly string[]>> = {
  neutral: ["trl", "math_shepherd"],
  alternatives: ["trl"],
  labels: ["trl", "math_shepherd"],
  ties: ["preference"],
};

/** Options of people's labels (the export API's HUMAN_ONLY and HUMAN_SHAPES): automatic labels
 * (labels=auto) export whole, + or -, and the API refuses every one of these with them. */
export const HUMAN_ONLY: readonly string[] = [
  "since",
  "generation",
  "split",
  "qc",
  "screening",
  "finish_reason",
  "labeler",
  "min_agreement",
  "neutral",
  "alternatives",
];

/** Whether `option` goes with an export of `format` (of automatic labels when `labels` is "auto"). */
export function optionApplies(option: string, format: string, labels = "human"): boolean {
  const formats = FORMAT_ONLY[option];
  if (formats !== undefined && !formats.includes(format)) return false;
  return !(labels === "auto" && optionApplies("labels", format) && HUMAN_ONLY.includes(option));
}

/** The form's values as the export API's JSON body: empty fields left out, lists comma-joined,
 * another format's options left out. */
export function exportBody(form: FormData): Record<string, string | boolean> {
  const body: Record<string, string | boolean> = {};
  const reasons = form.getAll("finish_reason").map(String);
  const format = String(form.get("format") ?? "");
  const labels = String(form.get("labels") ?? "human");
  for (const [key, value] of form.entries()) {
    if (key === "csrfmiddlewaretoken" || key === "finish_reason" || key === "gzip") continue;
    if (!optionApplies(key, format, labels)) continue;
    const text = String(value).trim();
    if (text) body[key] = text;
  }
  if (reasons.length && optionApplies("finish_reason", format, labels)) body.finish_reason = reasons.join(",");
  body.gzip = form.get("gzip") !== null;
  return body;
}

export function startExportForm(root: Document): void {
  const form = root.querySelector<HTMLFormElement>("form[data-export-form]");
  const boxEl = root.querySelector<HTMLElement>("[data-export-status]");
  const configEl = root.getElementById("export-config");
  if (!form || !boxEl || !configEl?.textContent) return;
  const config = JSON.parse(configEl.textContent) as ExportConfig;
  const box = new JobBox(boxEl);
  const button = form.querySelector<HTMLButtonElement>("button[type=submit]");
  const format = form.querySelector<HTMLSelectElement>("select[name=format]");
  const labels = form.querySelector<HTMLSelectElement>("select[name=labels]");
  if (format) {
    const show = () => showFormatOptions(form, format.value, labels?.value ?? "human");
    show();
    format.addEventListener("change", show);
    labels?.addEventListener("change", show);
  }
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (button) button.disabled = true;
    void runExport(config, exportBody(new FormData(form)), box).finally(() => {
      if (button) button.disabled = false;
    });
  });
}

/** Show the chosen format's own options (a fieldset marked data-format-only="trl ..."), hide and
 * disable the others', and with automatic labels the options of people's labels, so the form
 * shows and sends only what applies. */
function showFormatOptions(form: HTMLFormElement, format: string, labels: string): void {
  for (const box of form.querySelectorAll<HTMLFieldSetElement>("fieldset[data-format-only]")) {
    const shown = (box.dataset.formatOnly ?? "").split(" ").includes(format);
    box.hidden = !shown;
    box.disabled = !shown;
  }
  for (const name of HUMAN_ONLY) {
    const off = !optionApplies(name, format, labels);
    for (const input of form.querySelectorAll<HTMLInputElement | HTMLSelectElement>(`[name="${name}"]`)) {
      input.disabled = off;
      const field = input.closest<HTMLElement>(".sl-field");
      if (field) field.hidden = off;
    }
  }
  // a group whose every field is hidden goes too: its heading alone read as the title of what follows
  for (const box of form.querySelectorAll<HTMLFieldSetElement>("fieldset[data-format-only]:not([hidden])")) {
    const fields = [...box.querySelectorAll<HTMLElement>(".sl-field")];
    if (fields.length > 0 && fields.every((f) => f.hidden)) box.hidden = true;
  }
}

async function runExport(config: ExportConfig, body: Record<string, string | boolean>, box: JobBox): Promise<void> {
  box.progress("Starting the export…", null);
  const started = await postJson<ExportJob & Record<string, string[]>>(config.exports_url, config.csrf_token, body);
  if (started.status !== 202 || !started.body) {
    const problems = Object.entries(started.body ?? {}).map(([field, msgs]) => `${field}: ${[msgs].flat().join(" ")}`);
    box.failed(`The export was not started (HTTP ${started.status}).`, problems);
    return;
  }
  let job: ExportJob = started.body;
  const url = config.export_url.replace("{id}", String(job.id));
  while (!FINAL.has(job.status)) {
    box.progress(job.status === "created" ? "Waiting for a worker…" : `Writing… ${job.record_count} records`, null);
    await sleep(700);
    const next = await getJson<ExportJob>(url);
    if (next.status !== 200 || !next.body) {
      box.failed(`Lost track of the export (HTTP ${next.status}); reload the page to see its outcome.`);
      return;
    }
    job = next.body;
  }
  if (job.status === "failed") {
    box.failed(`The export failed: ${job.error || "see the worker's log"}.`);
    return;
  }
  const cursor = job.cursor ? ` Cursor for the next incremental export: ${job.cursor}.` : "";
  box.done(`Export ready: ${job.record_count} records.${cursor}`, {
    href: job.download_url ?? "#",
    text: "Download",
  });
  await refreshSection("[data-exports-section]");
}
