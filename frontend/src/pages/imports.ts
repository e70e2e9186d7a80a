/**
 * The data page's import: the file goes to the import API (the same endpoint scripts use); the
 * page shows the upload's progress, then the job's, then "Imported N solutions" or the first bad
 * lines. A file over the size limit is refused here before any byte is sent (the server refuses
 * it too, by Content-Length, before storing it).
 */
import { formatBytes, getJson, sleep, upload } from "./http";
import { JobBox, refreshSection } from "./job";

interface ImportConfig {
  imports_url: string;
  max_bytes: number;
  csrf_token: string;
  /** A compare project's bound on pairs per problem (Project.pairs_per_problem); absent for steps. */
  pairs_per_problem?: number;
}

interface LineError {
  line: number;
  field: string;
  message: string;
}

export interface ImportJob {
  id: number;
  status: "created" | "running" | "failed" | "succeeded";
  filename?: string;
  counters?: Record<string, number>;
  errors?: LineError[] | null;
  progress?: number | null;
  url?: string;
  detail?: string;
}

const FINAL = new Set(["failed", "succeeded"]);

export function startImportForm(root: Document): void {
  const form = root.querySelector<HTMLFormElement>("form[data-import-form]");
  const boxEl = root.querySelector<HTMLElement>("[data-import-status]");
  const configEl = root.getElementById("import-config");
  if (!form || !boxEl || !configEl?.textContent) return;
  const config = JSON.parse(configEl.textContent) as ImportConfig;
  const box = new JobBox(boxEl);
  const button = form.querySelector<HTMLButtonElement>("button[type=submit]");
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const input = form.querySelector<HTMLInputElement>("input[type=file]");
    const file = input?.files?.[0];
    if (!file) {
      box.failed("Choose a file to import first.");
      return;
    }
    if (file.size > config.max_bytes) {
      box.failed(
        `${file.name} is ${formatBytes(file.size)}; the limit is ${formatBytes(config.max_bytes)}. Nothing was uploaded.`,
      );
      return;
    }
    if (button) button.disabled = true;
    void runImport(config, file, box).finally(() => {
      if (button) button.disabled = false;
    });
  });
}

async function runImport(config: ImportConfig, file: File, box: JobBox): Promise<void> {
  const data = new FormData();
  data.append("file", file, file.name);
  box.progress(`Uploading ${file.name}…`, 0);
  let answer;
  try {
    answer = await upload<ImportJob>(config.imports_url, config.csrf_token, data, (f) =>
      box.progress(f < 1 ? `Uploading ${file.name}…` : `Checking ${file.name}…`, f < 1 ? f : null),
    );
  } catch (error) {
    box.failed((error as Error).message);
    return;
  }
  let job = answer.body;
  if (answer.status === 413 || !job || job.id === undefined) {
    box.failed(refusedMessage(answer.status, job));
    return;
  }
  // A job still running in a worker: follow it until it ends.
  const url = job.url ?? `${config.imports_url}${job.id}/`;
  while (!FINAL.has(job.status)) {
    const fraction = typeof job.progress === "number" ? job.progress : null;
    box.progress(job.status === "created" ? "Waiting for a worker…" : "Importing…", fraction);
    await sleep(700);
    const next = await getJson<ImportJob>(url);
    if (next.status !== 200 || !next.body) {
      box.failed(`Lost track of the import (HTTP ${next.status}); reload the page to see its outcome.`);
      return;
    }
    job = next.body;
  }
  showOutcome(job, box, config.pairs_per_problem);
  await refreshSection("[data-imports-section]");
}

/** Why the server refused an upload before making a job: its detail, or the file field's error
 * (an empty file: DRF's "The submitted file is empty."), else the status. */
export function refusedMessage(status: number, body: unknown): string {
  const b = (body ?? {}) as { detail?: unknown; file?: unknown };
  const fileError = Array.isArray(b.file) && typeof b.file[0] === "string" ? b.file[0] : null;
  const reason = typeof b.detail === "string" ? b.detail : (fileError ?? `The server refused the upload (HTTP ${status}).`);
  return `${reason} Nothing was imported.`;
}

/** `pairsPerProblem`: the project's bound, which a problem that gained a solution may have reached. */
export function importSummary(job: ImportJob, pairsPerProblem = 3): string {
  const c = job.counters ?? {};
  const n = c.solutions_created ?? 0;
  const dup = c.duplicates ?? 0;
  // The same file again: say so, rather than "0 new problems, 7 already in the project", which
  // reads as seven problems.
  if (dup && !n && !c.annotations_created && !c.pairs_created)
    return `Nothing new: all ${dup} line${dup === 1 ? " was" : "s were"} already in the project.`;
  const parts = [`Imported ${n} solution${n === 1 ? "" : "s"}`];
  const extra: string[] = [];
  if (c.annotations_created) extra.push(`${c.annotations_created} with labels`);
  // Math-Shepherd tags are automatic labels, kept apart from people's (never counted as labels)
  if (c.auto_labels_created)
    extra.push(`${c.auto_labels_created} automatic step label${c.auto_labels_created === 1 ? "" : "s"} kept`);
  if (c.problems_created !== undefined)
    extra.push(`${c.problems_created} new problem${c.problems_created === 1 ? "" : "s"}`);
  if (dup) extra.push(`${dup} line${dup === 1 ? "" : "s"} already in the project`);
  // Compare projects: annotators label pairs, so say how many the import made. None: either each
  // new solution is its problem's only one, or (a solution joined a problem that has another) its
  // problem already had its pairs: an import pairs up to the project's bound (Project.pairs_per_problem).
  if (c.pairs_created !== undefined)
    extra.push(
      c.pairs_created > 0
        ? `${c.pairs_created} new pair${c.pairs_created === 1 ? "" : "s"} to compare`
        : (c.problems_created ?? n) < n
          ? `no new pairs to compare: a problem gets at most ${pairsPerProblem} pair${pairsPerProblem === 1 ? "" : "s"}, and theirs had them already`
          : "no new pairs to compare: a pair needs two solutions of one problem",
    );
  return parts[0] + (extra.length ? ` (${extra.join(", ")}).` : ".");
}

/** What a failed import says: the bad lines, or a problem of the whole file (an error on line 0,
 * e.g. a file of blank lines only), which is no "bad line" and has no line to name. */
export function failureMessage(job: ImportJob): { text: string; lines: string[] } {
  const errors = job.errors ?? [];
  const fileErrors = errors.filter((e) => e.line === 0);
  if (errors.length && fileErrors.length === errors.length) {
    const why = fileErrors.map((e) => e.message.charAt(0).toUpperCase() + e.message.slice(1)).join(". ");
    return { text: `${why}. Nothing was imported. Fix the file and import it again.`, lines: [] };
  }
  const bad = job.counters?.bad_lines ?? errors.length;
  const shown = errors.length < bad ? ` (the first ${errors.length} are below)` : "";
  return {
    text: errors.length
      ? `${bad} bad line${bad === 1 ? "" : "s"}${shown}; nothing was imported. Fix the file and import it again.`
      : `The import failed; nothing was imported. ${job.detail ?? ""}`.trim(),
    lines: errors.map((e) => lineErrorText(e, job.filename)),
  };
}

/** Where, then what: "bad.jsonl, line 4, field problem: missing". A field in parentheses ("(json)",
 * "(line)") names no field of the record, so it is left out. */
export function lineErrorText(error: LineError, filename?: string): string {
  const where = filename ? `${filename}, line ${error.line}` : `Line ${error.line}`;
  const field = error.field.startsWith("(") ? "" : `, field ${error.field}`;
  return `${where}${field}: ${error.message}`;
}

function showOutcome(job: ImportJob, box: JobBox, pairsPerProblem?: number): void {
  if (job.status === "succeeded") {
    box.done(importSummary(job, pairsPerProblem));
    return;
  }
  const { text, lines } = failureMessage(job);
  box.failed(text, lines);
}
