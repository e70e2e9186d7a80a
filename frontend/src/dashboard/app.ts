/** The lead's dashboard: fetch /stats/ and draw every section; "Retrain now" posts a training run. */
import { barChart, curveChart, PALETTE, timeChart, watchResize } from "./charts";
import {
  agreementNotes,
  busiest,
  curveNote,
  fmtClock,
  fmtInt,
  fmtNum,
  fmtPct,
  fmtScore,
  fmtSeconds,
  fmtWhen,
  flagNote,
  generationLabel,
  compareGenerationLabel,
  compareGenerationLines,
  compareGenerationsNote,
  generationLines,
  GOLD_FIRST_ERROR_HELP,
  goldFirstErrorText,
  heldoutCell,
  heldoutSize,
  METRIC_NAMES,
  plural,
  queueFigure,
  savedAmount,
  savedInterval,
  screeningShortage,
  screeningText,
  shares,
  stepsNote,
  toUnixSeconds,
} from "./format";
import { compareCurveNote, compareFigures, pairProgressFigures } from "./compare";
import { named, strategyCaveat } from "./evidence";
import { h as el } from "../shared/dom";
import { Http, HttpError } from "../shared/http";
import type {
  AnnotatorRow,
  CompareStats,
  Disagreements,
  HeldOut,
  ProjectStats as Stats,
  Run,
  Savings,
  Series,
  TrainingRunRequested,
} from "../api/types";
import type { DashboardConfig } from "./types";

/** Sources of automatic labels (autolabel.models.AutoSource). */
const AUTO_SOURCES: Record<string, string> = { math_shepherd: "imported Math-Shepherd", rollout: "rollouts" };

/** A figure: big value, small caption. */
function figure(label: string, value: string, note?: string): HTMLElement {
  return el(
    "div",
    { class: "sl-figure" },
    el("span", { class: "sl-figure-value" }, value),
    el("span", { class: "sl-figure-label" }, label),
    note ? el("span", { class: "sl-figure-note" }, note) : null,
  );
}

/** A value list under a bar chart: label, count and share, so numbers are readable without hovering. */
function valueLegend(labels: string[], values: number[], colors?: string[]): HTMLElement {
  return el(
    "ul",
    { class: "sl-legend" },
    ...shares(labels, values).map(([label, value, share], i) =>
      el(
        "li",
        {},
        colors ? swatch(colors[i % colors.length]!) : null,
        `${label}: ${fmtInt(value)}${share === null ? "" : ` (${fmtPct(share)})`}`,
      ),
    ),
  );
}

function swatch(color: string): HTMLElement {
  const node = el("span", { class: "sl-swatch" });
  node.style.background = color;
  return node;
}

function when(iso: string | null): string {
  return fmtWhen(iso);
}

const GEN_COLORS = ["#afb8c1", "#1f6feb"] as const;
const RATING_COLORS = ["#2da44e", "#8c959f", "#cf222e", "#d0d7de"];
const TOP_ANNOTATORS = 6;
/** While a training run is queued or running, the page reloads its statistics this often (ms). */
export const RUN_REFRESH_MS = 4000;
/** Otherwise it reloads them this often while the tab is visible (ms); a hidden tab waits. */
export const IDLE_REFRESH_MS = 60_000;

export class Dashboard {
  private stats: Stats | null = null;
  private readonly http: Http;
  private refreshTimer = 0;
  /** The loads in order: a refresh that a timer, the tab or "Retrain now" starts waits for the one in flight. */
  private loading: Promise<void> = Promise.resolve();
  /** When the statistics last arrived (Date.now()), 0 before they first did. */
  private loadedAt = 0;
  /** When the last load ended, arrived or failed: the next refresh counts from it. */
  private triedAt = 0;
  /** start() turns the timed refreshes on (a Dashboard only asked to retrain makes no timers). */
  private refreshing = false;
  /** The run "Retrain now" started or joined: its note follows it until it ends. */
  private followedRun: number | null = null;
  /** The "Retrain now" request in flight, if any. */
  private retraining: Promise<void> | null = null;

  constructor(
    private readonly root: HTMLElement,
    private readonly config: DashboardConfig,
  ) {
    this.http = new Http("", config.csrf_token);
  }

  async start(): Promise<void> {
    watchResize();
    this.button("retrain").addEventListener("click", (event) => {
      if (!repeatedClick(event)) void this.retrain();
    });
    // The runs table is redrawn on every refresh: one listener on its slot serves each row's "Activate".
    this.slot("runs").addEventListener("click", (event) => {
      const button = (event.target as Element).closest<HTMLButtonElement>("button[data-activate]");
      if (button && !button.disabled && !repeatedClick(event)) void this.activate(button);
    });
    // The statistics refresh by themselves while the tab is visible, and pause while it is hidden.
    this.refreshing = true;
    document.addEventListener("visibilitychange", () => this.onVisibility());
    await this.load();
  }

  private slot(name: string): HTMLElement {
    const node = this.root.querySelector<HTMLElement>(`[data-slot="${name}"]`);
    if (!node) throw new Error(`missing slot ${name}`);
    return node;
  }

  private chart(name: string): HTMLElement {
    const node = this.root.querySelector<HTMLElement>(`[data-chart="${name}"]`);
    if (!node) throw new Error(`missing chart ${name}`);
    return node;
  }

  private button(name: string): HTMLButtonElement {
    const node = this.root.querySelector<HTMLButtonElement>(`[data-action="${name}"]`);
    if (!node) throw new Error(`missing button ${name}`);
    return node;
  }

  /** Fetch the statistics and redraw every section in place (the scroll position stays), then plan the next refresh. */
  load(): Promise<void> {
    this.loading = this.loading
      .catch(() => undefined) // a load that failed to draw does not stop the ones after it
      .then(() => this.fetchAndDraw())
      .finally(() => {
        this.triedAt = Date.now();
        this.schedule();
      });
    return this.loading;
  }

  /** The next refresh: soon while a training run is in progress, in a minute otherwise; none while the tab is hidden. */
  private schedule(): void {
    if (!this.refreshing) return;
    window.clearTimeout(this.refreshTimer);
    this.refreshTimer = 0;
    if (document.visibilityState === "hidden") return;
    const wait = Math.max(0, this.triedAt + this.refreshEvery - Date.now());
    this.refreshTimer = window.setTimeout(() => {
      this.refreshTimer = 0;
      void this.load();
    }, wait);
  }

  private get refreshEvery(): number {
    return this.stats?.model.in_progress ? RUN_REFRESH_MS : IDLE_REFRESH_MS;
  }

  /** Hidden: no refreshes. Visible again: statistics older than their refresh time reload at once. */
  private onVisibility(): void {
    if (document.visibilityState === "hidden") {
      window.clearTimeout(this.refreshTimer);
      this.refreshTimer = 0;
    } else if (!this.refreshTimer) {
      this.schedule();
    }
  }

  private async fetchAndDraw(): Promise<void> {
    const meta = this.slot("meta");
    // Asked for beside the statistics and drawn with them: a load that drew its figures and then
    // waited on a second request ended late enough that a refresh due meanwhile was skipped.
    const disagreements: Promise<Disagreements | Error | null> = this.isCompare
      ? Promise.resolve(null)
      : this.http.json<Disagreements>("GET", this.config.urls.disagreements).catch((error: unknown) =>
          error instanceof Error ? error : new Error(String(error)),
        );
    try {
      this.stats = await this.http.json<Stats>("GET", this.config.urls.stats);
    } catch (error) {
      // a failed refresh keeps the figures it could not replace, and says how old they are
      meta.textContent = this.loadedAt
        ? `Could not refresh the statistics: ${describe(error)}. The figures below are from ${fmtClock(new Date(this.loadedAt))}; the page keeps trying.`
        : `Could not load the statistics: ${describe(error)}`;
      meta.classList.add("sl-error");
      return;
    }
    this.loadedAt = Date.now();
    const s = this.stats;
    meta.classList.remove("sl-error");
    meta.replaceChildren(
      `As of ${when(s.generated_at)} (${s.solutions_at === s.generated_at ? "medians" : `solution counts and medians`} as of ${when(s.snapshot_at)}) · ` +
        `overlap ${s.project.overlap} · generation ${s.project.current_generation}`,
      el(
        "span",
        {
          class: "sl-updated",
          "data-slot": "updated",
          title: "The page reloads these statistics every minute while this tab is visible (paused while it is hidden).",
        },
        ` · updated ${fmtClock(new Date(this.loadedAt))}`,
      ),
    );
    this.progress(s);
    this.throughput(s);
    this.labels(s);
    this.quality(s);
    this.model(s);
    if (!this.isCompare) this.queue(s); // pairs are not queued by a selection strategy: no such card
    this.autoLabels(s);
    const found = await disagreements;
    if (found !== null) this.disagreements(found);
    if (this.isCompare) await this.pairs(s);
    this.root.dataset.loaded = "true";
    // a run finishes in a worker: schedule() follows it every few seconds until it does
  }

  private get isCompare(): boolean {
    return this.config.task_kind === "compare";
  }

  /** Compare projects: pair quality (…/compare-stats/) and the reward model's held-out pairwise accuracy. */
  private async pairs(s: Stats): Promise<void> {
    const slot = this.slot("compare-figures");
    let c: CompareStats;
    try {
      c = await this.http.json<CompareStats>("GET", this.config.urls.compare_stats!);
    } catch (error) {
      slot.replaceChildren(el("p", { class: "sl-error" }, `Could not load the pair statistics: ${describe(error)}`));
      return;
    }
    slot.replaceChildren(
      ...compareFigures(c, s.model.learning_curve, s.model.active_run).map((f) => {
        const node = figure(f.label, f.value, f.note);
        node.dataset.figure = f.key;
        if (f.warn) node.classList.add("sl-warn");
        return node;
      }),
    );
    this.slot("compare-note").textContent =
      `${plural(c.preferences, "preference")} on ${plural(c.pairs_answered, "pair")}, ${plural(c.ties, "tie")}. ` +
      "Intervals are 95% Wilson intervals.";
  }

  /** The solutions behind the first-error agreement figure where labels differ (…/disagreements/). */
  private disagreements(d: Disagreements | Error): void {
    const note = this.slot("disagreements-note");
    const table = this.slot("disagreements");
    if (d instanceof Error) {
      note.textContent = `Could not load the disagreements: ${describe(d)}`;
      note.classList.add("sl-error");
      return;
    }
    note.classList.remove("sl-error");
    note.textContent = disagreementsNote(d);
    if (!d.shown.length) {
      table.replaceChildren(); // no header row over nothing: the note says why
      return;
    }
    const heads = ["Solution", "Problem", "First error by label", ...(this.config.admin ? ["Settle"] : [])];
    table.replaceChildren(
      el(
        "thead",
        {},
        el(
          "tr",
          {},
          ...heads.map((h) => el("th", { scope: "col" }, h)),
        ),
      ),
      // On a phone each solution is a card (.sl-stack), its labels and Settle links on screen.
      el("tbody", {}, ...d.shown.map((row) => stackable(disagreementRow(row, this.config.admin === true), heads))),
    );
  }

  private progress(s: Stats): void {
    const p = s.progress;
    if (p.pairs) {
      // A compare project serves pairs, never a solution alone: its progress counts pairs and preferences.
      this.slot("progress-figures").replaceChildren(
        ...pairProgressFigures(p.pairs, p.solutions_total).map((f) => figure(f.label, f.value, f.note)),
        figure("steps labeled", fmtInt(p.steps_labeled), "from first-wrong marks and imported labels"),
      );
    } else {
      const queue = queueFigure(p);
      this.slot("progress-figures").replaceChildren(
        figure(
          "solutions labeled",
          `${fmtInt(p.solutions_labeled)} / ${fmtInt(p.solutions_total)}`,
          // at least once: with an overlap above 1 a solution counts here before its last label
          `${fmtPct(p.solutions_total ? p.solutions_labeled / p.solutions_total : null)}, at least once`,
        ),
        figure(p.solutions_open === 1 ? "solution open" : "solutions open", fmtInt(p.solutions_open), `${plural(p.labels_remaining, "label")} to go`),
        figure("steps labeled", fmtInt(p.steps_labeled), stepsNote(p, s.labels.alternatives)),
        figure(queue.label, queue.value, queue.note),
      );
    }
    // Generations with queue solutions (gold and screening answers carry no generation).
    const gens = p.by_generation.filter((g) => g.solutions > 0);
    const gensEl = this.chart("generations");
    // A compare project queues pairs, never a solution: its solutions carry no generation, and
    // "labeled" means a step label (a first-wrong mark or an imported one), not a preference.
    const compare = this.isCompare;
    const labeled = compare ? "with a step label (a first-wrong mark or imported)" : "labeled at least once, in any generation";
    barChart(
      gensEl,
      gens.map(compare ? compareGenerationLabel : generationLabel),
      [
        { label: "solutions", values: gens.map((g) => g.solutions), color: GEN_COLORS[0] },
        { label: compare ? "with a step label" : "labeled (in any generation)", values: gens.map((g) => g.labeled), color: GEN_COLORS[1] },
      ],
      { height: 180 },
    );
    const lines = compare ? compareGenerationLines(p.by_generation) : generationLines(p.by_generation);
    gensEl.append(
      el(
        "ul",
        { class: "sl-legend" },
        el("li", {}, swatch(GEN_COLORS[0]), "solutions"),
        el("li", {}, swatch(GEN_COLORS[1]), labeled),
        ...lines.map((line) => el("li", { "data-generation": "" }, line)),
      ),
      el("p", { class: "sl-figure-note" }, compare ? compareGenerationsNote(p) : generationsNote(p)),
    );
  }

  private throughput(s: Stats): void {
    const t = s.throughput;
    this.slot("throughput-figures").replaceChildren(
      figure(t.labels_last_24h === 1 ? "label in the last 24 h" : "labels in the last 24 h", fmtInt(t.labels_last_24h)),
      figure("median time per solution", fmtSeconds(t.median_seconds_per_solution)),
      figure("median time per step", fmtSeconds(t.median_seconds_per_step)),
    );
    this.slot("throughput-note").textContent = this.isCompare ? COMPARE_STEP_COUNTS : "";
    this.timeSeries("hourly", t.hourly);
    this.timeSeries("daily", t.daily);
  }

  private timeSeries(name: string, series: Series): void {
    const lines = [
      { label: "all annotators", values: series.labels, color: "#24292f", width: 2.5 },
      ...busiest(series.by_annotator, TOP_ANNOTATORS).map((a, i) => ({
        label: a.annotator,
        values: a.labels,
        color: PALETTE[i % PALETTE.length],
      })),
    ];
    timeChart(this.chart(name), toUnixSeconds(series.buckets), lines, { y: "labels" });
  }

  private labels(s: Stats): void {
    const l = s.labels;
    this.slot("labels-figures").replaceChildren(
      figure("steps rated", ...stepsRatedFigure(l.steps, l.ratings.unrated)),
      figure("flag rate", fmtPct(l.flag_rate), `${fmtInt(l.flagged)} flagged steps`),
      figure("wrong final answer", ...wrongAnswerFigure(l.wrong_answer)),
      figure("alternatives rated", fmtInt(l.alternatives)), // imported labels' alternatives count too
    );
    const ratingNames = ["positive (+1)", "neutral (0)", "negative (−1)", "unrated"];
    const ratings = [l.ratings.positive, l.ratings.neutral, l.ratings.negative, l.ratings.unrated];
    const ratingsEl = this.chart("ratings");
    barChart(ratingsEl, ratingNames, [{ label: "steps", values: ratings }], { colorEach: RATING_COLORS });
    ratingsEl.append(valueLegend(ratingNames, ratings, RATING_COLORS));
    const reasons = Object.keys(l.finish_reasons) as (keyof typeof l.finish_reasons)[];
    const counts = reasons.map((r) => l.finish_reasons[r] ?? 0);
    const finishEl = this.chart("finish");
    barChart(finishEl, reasons.map(humanize), [{ label: "labels", values: counts, color: PALETTE[2] }]);
    finishEl.append(valueLegend(reasons.map(humanize), counts));
  }

  private quality(s: Stats): void {
    const q = s.quality;
    const shortage = screeningShortage(q);
    this.slot("quality-note").textContent =
      (shortage ? `${shortage} ` : "") +
      `Rows in red: ${flagRule(q).toLowerCase()}` +
      (this.isCompare
        ? ". "
        : "; the flag does not look at Gold first error. Gold first error: the share of an annotator's gold answers " +
          "that put the first −1 where the gold label does (or, like it, nowhere): rating every step +1 keeps gold " +
          "accuracy high, not this share. ") +
      "Labels and times count all that an annotator submitted except gold references: a label marked as gold " +
      "(the answer key of a gold question) leaves these counts." +
      (this.isCompare
        ? " In a compare project Preferences counts each annotator's answers on pairs; labels, steps and times " +
          "count step labels (imported ones and the first-wrong-step marks)."
        : "");
    // [heading, its tooltip]
    const header: [string, string?][] = [
      ["Annotator"],
      ...(this.isCompare ? [["Preferences"] as [string]] : []),
      ["Labels"],
      ["Steps"],
      ["+1\u00a0/\u00a00\u00a0/\u00a0−1"], // headings wrap to fit the card (dashboard.css): not this one
      ["Flag rate"],
      ["Median / solution"],
      ["Median / step"],
      ["Gold accuracy (n)", "On gold and screening questions: the share of rated steps that agree with the gold label; n is the gold answers compared."],
      // a compare project's gold questions are pairs (their accuracy is under Pairs, above): no column
      // for first errors on gold solutions, which also keeps its wider table in the card at 1024 px
      ...(this.isCompare ? [] : [["Gold first error", GOLD_FIRST_ERROR_HELP] as [string, string]]),
      ["Screening"],
      ["Last label"],
    ];
    const flag = flagRule(q);
    const table = this.slot("annotators");
    table.replaceChildren(
      el(
        "thead",
        {},
        el("tr", {}, ...header.map(([h, title]) => el("th", title ? { scope: "col", title, class: "sl-help-head" } : { scope: "col" }, h))),
      ),
      el(
        "tbody",
        {},
        ...(q.annotators.length
          ? q.annotators.map((r) => annotatorRow(r, s.snapshot_at, this.isCompare, flag, flagNote(r, q.threshold, q.flag_min_gold)))
          : [el("tr", {}, el("td", { colspan: String(header.length), class: "sl-empty" }, "No labels yet."))]),
      ),
    );
    const a = q.agreement;
    if (this.isCompare) {
      // step-label agreement has nothing to compare in a pair project: its agreement is on pairs
      this.slot("agreement").replaceChildren(
        el("p", { class: "sl-note" }, "Agreement between annotators on the same pair is under Pairs and the reward model, above."),
      );
      return;
    }
    const sample = a.sampled ? ` (latest ${fmtInt(a.sample_limit)} overlapping solutions)` : "";
    const notes = agreementNotes(a.solutions_compared, a.pairs, sample);
    this.slot("agreement").replaceChildren(
      figure("Krippendorff's α (ordinal)", fmtNum(a.alpha), notes.alpha),
      figure("first-error agreement", fmtPct(a.first_error_agreement), notes.pairs),
      figure("overlap", String(a.overlap), a.solutions_compared ? "labels per solution" : "no solution labeled twice yet"),
    );
  }

  private model(s: Stats): void {
    const m = s.model;
    const active = m.active_run;
    const latest = m.latest_run;
    const unit = this.isCompare ? "preferences" : "step labels";
    this.slot("model-figures").replaceChildren(
      figure("active model", active ? `run #${active.id}` : "none", active ? `${fmtInt(active.label_count)} ${unit}` : undefined),
      figure(
        "latest run",
        latest ? `#${latest.id} ${latest.status}` : "none yet",
        latest?.error
          ? latest.error
          : latest?.status === "created"
            ? "queued: waiting for a worker"
            : m.in_progress
              ? "training in progress"
              : undefined,
      ),
      figure(m.runs.length === 1 ? "run" : "runs", fmtInt(m.runs.length)),
    );
    this.followRun(m.runs, active?.id);
    const curve = m.learning_curve;
    const curveEl = this.chart("curve");
    if (curve.length) {
      curveChart(
        curveEl,
        curve.map((c) => c.label_count),
        m.curve_metrics.map((k, i) => ({
          label: METRIC_NAMES[k] ?? k,
          values: curve.map((c) => (c[k as keyof HeldOut] as number | undefined) ?? null),
          color: PALETTE[i % PALETTE.length],
          dash: k === "ece" ? [5, 4] : undefined,
        })),
        unit,
      );
      const note = (this.isCompare ? compareCurveNote : curveNote)(curve[curve.length - 1]!);
      curveEl.append(
        el("p", { class: note.tooSmall ? "sl-curve-note sl-warn" : "sl-curve-note", "data-slot": "curve-note" }, note.text),
      );
    } else {
      const why = m.curve_empty?.message ?? "No finished training run with held-out metrics yet.";
      curveEl.replaceChildren(el("p", { class: "sl-empty", "data-slot": "curve-empty" }, why));
    }
    const runs = [...m.runs].reverse().slice(0, 20);
    if (!runs.length) {
      this.slot("runs").replaceChildren(); // no header row over nothing: the curve's note says why
      return;
    }
    const heads = ["Run", "Status", this.isCompare ? "Preferences" : "Step labels", ...m.curve_metrics.map((k) => METRIC_NAMES[k] ?? k), "Held-out", "Finished", "Model"];
    this.slot("runs").replaceChildren(
      el("thead", {}, el("tr", {}, ...heads.map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, ...runs.map((r) => stackable(runRow(r, m.curve_metrics), heads))),
    );
  }

  private queue(s: Stats): void {
    this.slot("savings").textContent = savingsText(s.queue.savings, s.queue.selection_strategy);
    // folded under a line of its own (a long paragraph of statistics under the chart); open when it cautions
    const caveat = strategyCaveat(s.queue.selection_strategy);
    const box = this.slot("strategy-caveat-box") as HTMLDetailsElement;
    this.slot("strategy-caveat").textContent = caveat;
    box.hidden = caveat === "";
    if (caveat.startsWith("Caution")) box.open = true;
    const rows = s.queue.open_by_strategy;
    const strategiesEl = this.chart("strategies");
    if (!rows.length) {
      strategiesEl.replaceChildren(el("p", { class: "sl-empty" }, "No open solutions."));
      return;
    }
    const names = rows.map((r) => humanize(r.strategy));
    const counts = rows.map((r) => r.open);
    barChart(strategiesEl, names, [{ label: "open solutions", values: counts, color: PALETTE[3] }]);
    strategiesEl.append(valueLegend(names, counts));
  }

  /** Monte Carlo labels (autolabel): coverage, the latest job, and how far people agree with them. */
  private autoLabels(s: Stats): void {
    const a = s.auto_labels;
    const job = a.latest_job;
    const sources = Object.entries(a.by_source)
      .map(([source, n]) => `${AUTO_SOURCES[source] ?? source} ${fmtInt(n)}`)
      .join(" · ");
    this.slot("auto-figures").replaceChildren(
      // "with", not "auto-labeled": a graded answer alone labels some steps (a wrong one its last
      // step), so a failed job can leave solutions with labels that it did not finish.
      figure(
        "solutions with auto labels",
        fmtInt(a.solutions_with_auto_labels),
        // the complete ones are what labels=auto exports; the rest hold a few (a stopped job, a free last step)
        [`${fmtInt(a.solutions_complete)} on every step`, sources].filter(Boolean).join(" · "),
      ),
      figure(
        "first-error agreement",
        fmtPct(a.first_error_agreement),
        `with people, over ${plural(a.pairs_compared, "label")}`,
      ),
      figure(
        "precision / recall of −",
        `${fmtPct(a.precision_negative)} / ${fmtPct(a.recall_negative)}`,
        "against human first errors",
      ),
      figure(
        "latest job",
        job ? `#${job.id} ${job.status}` : "none",
        job ? `${fmtInt(job.solutions_done)} / ${fmtInt(job.solutions_total)} solutions · ${fmtInt(job.completions_used)} completions` : undefined,
      ),
    );
    const note = this.slot("auto-note");
    const budget = a.budget;
    note.textContent = job?.error
      ? `Latest job failed: ${job.error}`
      : budget
        ? `Budget: ${fmtInt(budget.completions_used)} of ${fmtInt(budget.completions_budget)} completions used` +
          (budget.disagreement_first ? " · the queue serves first where the PRM contradicts them." : ".")
        : "No job yet. A job needs an OpenAI-compatible completions server (vLLM, SGLang, llama.cpp) serving a " +
          "model: start one on the Data page (Label automatically), with manage.py autolabel --base-url URL " +
          "--model NAME, or POST …/autolabel-jobs/ with base_url and model (README: Automatic labels).";
    note.classList.toggle("sl-error", Boolean(job?.error));
  }

  /**
   * "Retrain now": one POST at a time. The button is disabled (and aria-busy) until the request and
   * the reload after it end, and a call while one is in flight joins it instead of posting again;
   * the click listener also ignores a double click's second click (`repeatedClick`). A double click
   * made two runs on the same labels (the server now merges such a request too).
   */
  retrain(): Promise<void> {
    this.retraining ??= this.postRetrain().finally(() => {
      this.retraining = null;
    });
    return this.retraining;
  }

  /**
   * A run's "Activate" (a rollback, or taking a run that finished after one): the lead's choice
   * becomes the active model at once and the queue is reordered with it by a job on the worker.
   */
  private async activate(button: HTMLButtonElement): Promise<void> {
    const id = Number(button.dataset.activate);
    const message = this.slot("runs-message");
    button.disabled = true;
    message.classList.remove("sl-error");
    message.textContent = `Activating run #${id}…`;
    try {
      await this.http.json("POST", `${this.config.urls.training_runs}${id}/activate/`);
      message.textContent = activatedNote(id);
      // "Training run #N succeeded: it is the active model" under Retrain now was no longer true;
      // a run still followed there keeps its note (it ends saying whether it took over).
      if (this.followedRun === null) this.slot("retrain-message").textContent = "";
      await this.load();
      // the redraw took the pressed button away, and focus with it: keep the keyboard's place
      message.focus();
    } catch (error) {
      message.textContent = `Could not activate run #${id}: ${describe(error)}`;
      message.classList.add("sl-error");
      button.disabled = false;
    }
  }

  /** A run that the note says was created or is running has ended: the note says how. */
  private followRun(runs: { id: number; status: string; note?: string }[], activeId: number | undefined): void {
    const run = runs.find((r) => r.id === this.followedRun);
    if (!run || run.status === "created" || run.status === "running") return;
    const message = this.slot("retrain-message");
    message.textContent = runEndedNote(run, activeId);
    message.classList.toggle("sl-error", run.status !== "succeeded");
    this.followedRun = null;
  }

  private async postRetrain(): Promise<void> {
    const button = this.button("retrain");
    const message = this.slot("retrain-message");
    button.disabled = true;
    button.setAttribute("aria-busy", "true");
    message.classList.remove("sl-error");
    message.textContent = "Starting a training run…";
    // "Run #N is the active model" under the runs table stops being true once this run takes over
    this.slot("runs-message").textContent = "";
    try {
      const run = await this.http.json<TrainingRunRequested>("POST", this.config.urls.training_runs, {});
      message.textContent = retrainNote(run);
      this.followedRun = run.id && run.status !== "succeeded" ? run.id : null;
      await this.load();
    } catch (error) {
      message.textContent = `Retrain failed: ${describe(error)}`;
      message.classList.add("sl-error");
    } finally {
      button.disabled = false;
      button.removeAttribute("aria-busy");
    }
  }
}

/** The note under "Retrain now" when the request is answered. */
export function retrainNote(run: Pick<TrainingRunRequested, "id" | "status" | "merged">): string {
  if (!run.id) return "Retrain requested.";
  if (run.merged && run.status === "succeeded") {
    return `No new labels since training run #${run.id}, the active model: nothing new to train on, so no run.`;
  }
  return run.merged // joined the run that waits for, or already trains on, these labels
    ? `Joined training run #${run.id} (${run.status ?? "queued"}): it covers these labels, so no second run.`
    : `Training run #${run.id} ${run.status ?? "queued"}.`;
}

/** What the disagreements table holds, or why it is empty. */
export function disagreementsNote(d: Pick<Disagreements, "solutions_compared" | "disagreeing" | "shown">): string {
  if (!d.solutions_compared) {
    return "No solution has two labels yet: with an overlap above 1, the solutions whose labels differ on the first error are listed here.";
  }
  if (!d.disagreeing) return `The labels agree on the first error on all ${plural(d.solutions_compared, "solution")} labeled twice or more.`;
  const shown = d.shown.length < d.disagreeing ? ` The ${fmtInt(d.shown.length)} most recently labeled are below.` : "";
  return (
    `${fmtInt(d.disagreeing)} of ${plural(d.solutions_compared, "solution")} labeled twice or more put the first error at different steps.${shown} ` +
    "Settle one by marking the right label gold, or reopen the solution for another label (admin)."
  );
}

/** "step 2", or "none" for a label that found no error. */
export function firstErrorText(step: number | null | undefined): string {
  return step == null ? "none" : `step ${step}`;
}

function disagreementRow(row: Disagreements["shown"][number], admin: boolean): HTMLTableRowElement {
  const labels = el(
    "ul",
    { class: "sl-plain-list" },
    ...row.labels.map((l) => el("li", {}, `${l.annotator}: ${firstErrorText(l.first_error_step)}`)),
  );
  return el(
    "tr",
    { "data-solution": String(row.solution) },
    el("th", { scope: "row" }, `#${row.solution}`),
    el("td", { class: "sl-wrap" }, row.problem),
    el("td", {}, labels),
    admin
      ? el(
          "td",
          {},
          el("a", { href: `/admin/annotate/annotation/?solution__id__exact=${row.solution}` }, "Its labels"),
          " · ",
          // The solutions list at this one solution: its "Reopen for relabeling" action asks for one more
          // label. The change page has no such action, and ticking "Is open" there serves a solution at
          // its overlap to no one.
          el("a", { href: `/admin/annotate/solution/?id__exact=${row.solution}` }, "The solution"),
        )
      : null,
  );
}

/** The note under the runs table once a lead's "Activate" is answered. */
export function activatedNote(id: number): string {
  return (
    `Run #${id} is the active model: the queue is being reordered with it. A run that was queued or ` +
    "training before this finishes without replacing it; a retrain asked for from now on does replace it."
  );
}

/** How the note under "Retrain now" reads once the run it followed has ended. */
export function runEndedNote(
  run: { id: number; status: string; note?: string },
  activeId: number | undefined,
): string {
  if (run.status === "succeeded") {
    return activeId === run.id
      ? `Training run #${run.id} succeeded: it is the active model and the queue follows it.`
      : `Training run #${run.id} succeeded.${run.note ? ` ${run.note}` : ""}`; // held back by a lead's rollback
  }
  return `Training run #${run.id} ${run.status}: its error is in the runs table.`;
}

/**
 * The second (third, ...) click of a double click: ignored by "Retrain now". Its request may have
 * ended by then (a fast server answers within a slow double click), and the button is enabled again.
 * A keyboard press has detail 0.
 */
export function repeatedClick(event: Pick<MouseEvent, "detail">): boolean {
  return event.detail > 1;
}


/** The note under the generations chart: where labels count, and their total. */
function generationsNote(p: Stats["progress"]): string {
  return (
    `Labels count under the generation they were served in (solutions without one are served in the current one)` +
    (p.labels_imported
      ? `; imported labels under the generation their file gave them (PRM800K numbers its own rounds, not this project's models)`
      : "") +
    `. Together: ${plural(p.labels, "label")}, ${plural(p.steps_labeled, "step")}.`
  );
}

// A compare project's step-label figures count imported labels and first-wrong marks, not its preferences.
const COMPARE_STEP_COUNTS =
  "In a compare project these count step labels (imported ones and the first-wrong-step marks), not " +
  "preferences: the preferences are counted under Pairs and the reward model, above.";

/** When an annotator's row turns red (the quality note and the rows' title say the same). */
function flagRule(q: Stats["quality"]): string {
  return (
    `Gold accuracy below the screening threshold (${fmtPct(q.threshold, 0)}) over at least ` +
    `${q.flag_min_gold} gold answers, or failed screening`
  );
}

/** Steps rated: the labels' steps less those shown without a rating (a trace's observations, where
 * the project does not rate them), which the ratings chart counts as "unrated"; "4 steps rated"
 * stood beside "unrated: 1" when 3 were. */
export function stepsRatedFigure(steps: number, unrated: number): [string, string | undefined] {
  const value = fmtInt(steps - unrated);
  return [value, unrated ? `${fmtInt(unrated)} more shown without a rating` : undefined];
}

/** The wrong-answer share among graded labeled solutions, and the caption that says how many were
 * not graded (a solution whose final answer could not be read, or with no ground truth): counted as
 * right, 4 wrong of 61 read as 7% when 57 were never graded. */
export function wrongAnswerFigure(w: Stats["labels"]["wrong_answer"]): [string, string] {
  const graded = w.wrong + w.correct;
  const value = graded ? fmtPct(w.wrong / graded) : "—";
  const caption = `${fmtInt(w.wrong)} of ${fmtInt(graded)} graded labeled solutions`;
  if (!w.ungraded) return [value, caption];
  return [value, `${caption}; ${fmtInt(w.ungraded)} of ${fmtInt(w.labeled_solutions)} not graded (no final answer or ground truth read)`];
}

/** One line: labels saved against the random control with its interval, or why there is no estimate yet. */
export function savingsText(v: Savings | undefined, strategy?: string): string {
  if (!v) return "";
  if (strategy === "random") return "Labels saved vs random: not applicable, the queue is in random order already.";
  if (v.control_share <= 0) return "Labels saved vs random: no control share is set for this project, so there is no estimate.";
  const order = `the ${named(v.strategy)} order`;
  // Labels an earlier strategy served say nothing of this one: say they were left out.
  const other = v.n_other ? ` ${v.n_other} labelings served by an earlier order or the cold start are not counted.` : "";
  if (v.status !== "ok" || v.labels_saved == null || !v.labels_saved_ci || !v.yield_ratio_ci || v.yield_ratio == null) {
    const share = `${Math.round(v.control_share * 100)}% control share`;
    if (v.control_capacity < v.min_control) {
      return (
        `Labels saved vs random: no estimate possible in this queue: at its ${share} it can give about ` +
        `${plural(v.control_capacity, "control labeling")} in all (those done and its share of the labels still ` +
        `to go), and the estimate needs ${v.min_control}. ` +
        (v.control_share >= v.max_control_share
          ? `Import more solutions (the share is at its most).${other}`
          : `Raise the control share or import more solutions.${other}`)
      );
    }
    // Name only the group that is short: "24 of 20 strategy labelings" read as still missing.
    const short = [];
    if (v.n_control < v.min_control) short.push(`${v.n_control} of the ${v.min_control} control labelings it needs`);
    if (v.n_strategy < v.min_strategy) short.push(`${v.n_strategy} of the ${v.min_strategy} it needs from ${order}`);
    const counts = short.length
      ? short.join(" and ")
      : `${v.n_control} control labelings and ${v.n_strategy} from ${order}`;
    return `Labels saved vs random: not enough data yet (${counts}; ${share}).${other}`;
  }
  const [lo, hi] = v.labels_saved_ci;
  const [rlo, rhi] = v.yield_ratio_ci;
  // a negative saving is a cost: the estimate and its interval say it in words ("more", "fewer"), not as "-95 saved"
  return (
    `Labels saved vs random: ${savedAmount(v.labels_saved)} (95% CI: ${savedInterval(lo!, hi!)}); ` +
    `${v.measure}: ${v.yield_ratio.toFixed(2)}x the random control (${rlo!.toFixed(2)}–${rhi!.toFixed(2)}), ` +
    `from ${v.n_control} control labelings and ${v.n_strategy} from ${order}.${other}`
  );
}

function humanize(key: string): string {
  return key.replaceAll("_", " ");
}

/** "403: Only leads may ..." for an HTTP refusal, the message of anything else. */
function describe(error: unknown): string {
  if (error instanceof HttpError) return `${error.status}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

/** A median cell. Medians come from the statistics snapshot: an annotator whose labels are all
 * newer than it has none yet, which says "pending", not "—" (imported labels carry no times). */
function medianCell(seconds: number | null | undefined, newer: boolean): HTMLTableCellElement {
  const pending = newer && (seconds === null || seconds === undefined);
  if (!pending) return el("td", { class: "sl-num" }, fmtSeconds(seconds));
  const title = "Medians come from the statistics snapshot ('medians as of' above); these labels are newer and count at its next refresh.";
  return el("td", { class: "sl-num sl-muted", title }, "pending");
}

/** A row of the annotators table; a flagged one is red and says why under the name (`note`), so
 * the colour is not the only sign, and its title gives the rule. */
function annotatorRow(
  r: AnnotatorRow,
  snapshotAt: string | null,
  compare: boolean,
  flag: string,
  note: string | null,
): HTMLTableRowElement {
  const newer = !!r.last_label_at && !!snapshotAt && Date.parse(r.last_label_at) > Date.parse(snapshotAt);
  const row = el(
    "tr",
    r.below_threshold ? { class: "sl-below", title: flag } : {},
    el("th", { scope: "row" }, r.annotator, note ? el("small", { class: "sl-flag-note", "data-flag-note": "" }, note) : null),
    compare ? el("td", { class: "sl-num" }, fmtInt(r.preferences ?? 0)) : null,
    el("td", { class: "sl-num" }, fmtInt(r.labels)),
    el("td", { class: "sl-num" }, fmtInt(r.steps)),
    el("td", { class: "sl-num" }, `${fmtPct(r.positive_rate, 0)} / ${fmtPct(r.neutral_rate, 0)} / ${fmtPct(r.negative_rate, 0)}`),
    el("td", { class: "sl-num" }, fmtPct(r.flag_rate)),
    medianCell(r.median_seconds_per_solution, newer),
    medianCell(r.median_seconds_per_step, newer),
    el("td", { class: "sl-num" }, r.gold_solutions ? `${fmtPct(r.gold_accuracy)} (${fmtInt(r.gold_solutions)})` : "—"),
    compare ? null : el("td", { class: "sl-num", "data-col": "gold-first-error" }, goldFirstErrorText(r)),
    el("td", {}, screeningText(r)),
    el("td", {}, when(r.last_label_at)),
  );
  return row;
}

const INTERVALS: Record<string, "accuracy_ci" | "first_error_f1_ci" | "pairwise_accuracy_ci"> = {
  accuracy: "accuracy_ci",
  first_error_f1: "first_error_f1_ci",
  pairwise_accuracy: "pairwise_accuracy_ci",
};

function runRow(r: Run, metrics: string[]): HTMLTableRowElement {
  const h = r.heldout;
  const size = heldoutSize(h);
  const score = (k: string): string => {
    const ci = INTERVALS[k] ? h[INTERVALS[k]] : undefined;
    return fmtScore(h[k as keyof HeldOut] as number | undefined, ci);
  };
  return el(
    "tr",
    r.is_active ? { class: "sl-active" } : {},
    el("th", { scope: "row" }, `#${r.id}${r.is_active ? " (active)" : ""}`),
    el(
      "td",
      { class: r.status === "failed" ? "sl-error" : "" },
      r.status,
      r.error ? el("small", {}, ` ${r.error}`) : null,
      r.note ? el("small", { "data-slot": "run-note" }, ` ${r.note}`) : null,
    ),
    el("td", { class: "sl-num" }, fmtInt(r.label_count)),
    ...metrics.map((k) => el("td", { class: "sl-num" }, score(k))),
    el(
      "td",
      size.tooSmall ? { class: "sl-warn", title: size.text } : {},
      h.n_steps !== undefined
        ? `${heldoutCell(h)}${size.tooSmall ? " (too small)" : ""}`
        : h.n_pairs !== undefined
          ? `${plural(h.n_pairs, "pair")}` // a compare project's reward model
          : "—",
    ),
    el("td", {}, when(r.finished_at)),
    el("td", {}, modelCell(r)),
  );
}

/**
 * A row that a narrow screen shows as a card (`.sl-stack` in dashboard.css): each data cell gets
 * its column's name (`data-label`, drawn before it where the header row is hidden) and its content
 * one wrapper, so the name and the value sit in two columns however the value wraps; a cell of
 * "—" (no value) is marked `data-none`, which the card leaves out.
 */
function stackable(row: HTMLTableRowElement, heads: readonly string[]): HTMLTableRowElement {
  [...row.cells].forEach((cell, i) => {
    if (cell.tagName !== "TD" || heads[i] === undefined) return;
    cell.dataset.label = heads[i];
    if (cell.textContent?.trim() === "—") cell.dataset.none = ""; // a card leaves out what a run has not
    cell.replaceChildren(el("span", { class: "sl-cell-value" }, ...cell.childNodes));
  });
  return row;
}

/** The active run says so; another succeeded run offers "Activate" (the API's 409 explains a missing model file). */
function modelCell(r: Run): HTMLElement | string {
  if (r.is_active) return "active";
  if (r.status !== "succeeded") return "—";
  return el(
    "button",
    { type: "button", class: "sl-button sl-small", "data-activate": String(r.id), "aria-label": `Activate run #${r.id}` },
    "Activate",
  );
}
