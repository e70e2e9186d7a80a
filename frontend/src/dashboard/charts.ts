/** Thin wrappers over uPlot: time-series lines, an x-y curve and categorical bars. */
import uPlot from "uplot";

export const PALETTE = ["#1f6feb", "#d97706", "#7c3aed", "#059669", "#db2777", "#0891b2", "#65a30d", "#9f1239"];

const charts = new Map<HTMLElement, uPlot>();

function width(el: HTMLElement): number {
  return Math.max(240, Math.floor(el.clientWidth || el.getBoundingClientRect().width));
}

function mount(el: HTMLElement, opts: uPlot.Options, data: uPlot.AlignedData): uPlot {
  charts.get(el)?.destroy();
  el.replaceChildren();
  const plot = new uPlot(withLatestLegend(opts, data[0].length), data, el);
  if (data[0].length) plot.setLegend({ idx: data[0].length - 1 }, false);
  charts.set(el, plot);
  el.dataset.drawn = "true";
  return plot;
}

/**
 * The legend shows the latest point's values while the cursor is off the chart (uPlot's own
 * legend shows "--" then, which reads as "no data"); hovering shows the point under the cursor.
 */
function withLatestLegend(opts: uPlot.Options, n: number): uPlot.Options {
  if (!n || opts.legend?.show === false) return opts;
  const latest = (u: uPlot) => {
    if (u.cursor.idx == null) u.setLegend({ idx: n - 1 }, false);
  };
  return { ...opts, hooks: { ...opts.hooks, setCursor: [...(opts.hooks?.setCursor ?? []), latest] } };
}

/** Keep every chart as wide as its box. */
export function watchResize(): void {
  let pending = 0;
  window.addEventListener("resize", () => {
    cancelAnimationFrame(pending);
    pending = requestAnimationFrame(() => {
      for (const [el, plot] of charts) plot.setSize({ width: width(el), height: plot.height });
    });
  });
}

export interface Line {
  label: string;
  values: (number | null)[];
  color?: string;
  width?: number;
  dash?: number[];
}

/** Lines over time (x in Unix seconds). */
export function timeChart(el: HTMLElement, x: number[], lines: Line[], opts: { height?: number; y?: string } = {}): uPlot {
  return mount(
    el,
    {
      width: width(el),
      height: opts.height ?? 220,
      scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.1)] } },
      axes: [{}, { label: opts.y, size: 56 }],
      series: [
        {},
        ...lines.map((line, i) => ({
          label: line.label,
          stroke: line.color ?? PALETTE[i % PALETTE.length],
          width: line.width ?? 1.5,
          dash: line.dash,
          points: { show: false },
        })),
      ],
    },
    [x, ...lines.map((l) => l.values)] as uPlot.AlignedData,
  );
}

/**
 * The learning curve's markers: rings that shrink from series to series, so metrics at the same
 * value (step accuracy and first-error F1 both 1.0) show one inside the other. uPlot draws the
 * series in order, so each later, smaller ring lands inside the earlier ones, never over them; the
 * last is a filled dot. The data are drawn where they are, unmoved.
 */
export function curvePoints(i: number, n: number, color: string): uPlot.Series.Points {
  const last = i === n - 1;
  // diameters 5 px apart with 1.5 px strokes: a pixel of white between neighbouring rings
  return { show: true, size: 5 + 5 * (n - 1 - i), width: 1.5, stroke: color, fill: last ? color : "#fff" };
}

/** An x-y curve with points (the learning curve: metrics against step labels). */
export function curveChart(el: HTMLElement, x: number[], lines: Line[], xLabel: string): uPlot {
  return mount(
    el,
    {
      width: width(el),
      height: 240,
      // a little headroom above 1 so markers at 1.0 are drawn whole, not cut by the plot's edge
      scales: { x: { time: false }, y: { range: [0, 1.05] } },
      // step labels are counts: whole-number ticks (uPlot's own steps gave "265.5")
      axes: [{ label: xLabel, incrs: COUNT_INCRS }, { size: 48 }],
      series: [
        { label: xLabel, value: (_u: uPlot, v: number | null) => (v == null ? "--" : String(Math.round(v))) },
        ...lines.map((line, i) => ({
          label: line.label,
          stroke: line.color ?? PALETTE[i % PALETTE.length],
          width: 2,
          dash: line.dash,
          points: curvePoints(i, lines.length, line.color ?? PALETTE[i % PALETTE.length]!),
          // as the runs table below prints them (uPlot's default drops trailing zeros: "0.5")
          value: (_u: uPlot, v: number | null) => (v == null ? "--" : v.toFixed(3)),
        })),
      ],
    },
    [x, ...lines.map((l) => l.values)] as uPlot.AlignedData,
  );
}

export interface Bars {
  label: string;
  values: number[];
  color?: string;
}

/**
 * Categorical bars: one bar per category, or two side by side. With one series and `colorEach`,
 * each category gets its own color (drawn as one series per category).
 */
/** A category label cut to the room under its bar (about 7 px a character at the axis' 12 px
 * font), with an ellipsis: on a phone four labels ran into one another. The legend beside every
 * bar chart keeps the full names. */
export function fitLabel(label: string, roomPx: number): string {
  const max = Math.max(3, Math.floor(roomPx / 7));
  // A round's bar keeps its number on a phone ("gen 6 (imported)" -> "6 (imported)" -> "6"),
  // where cutting the end left every bar "gen…"
  const bare = label.replace(/^gen /, "");
  for (const form of [label, bare, bare.replace(/ \(.*\)$/, "")]) if (form.length <= max) return form;
  return `${label.slice(0, max - 1).trimEnd()}…`;
}

/** Whole-number tick steps (1, 2, 5, 10, 20, 25, 50, ...): every bar chart counts things, and
 * uPlot's own steps put 2.5 and 7.5 on a chart of 8 solutions. */
export const COUNT_INCRS: number[] = [1, 2, 5];
for (let scale = 10; scale <= 1e9; scale *= 10) COUNT_INCRS.push(scale, 2 * scale, 2.5 * scale, 5 * scale);

export function barChart(
  el: HTMLElement,
  categories: string[],
  bars: Bars[],
  opts: { height?: number; colorEach?: string[] } = {},
): uPlot {
  const n = categories.length;
  const x = categories.map((_, i) => i);
  let series: Bars[] = bars;
  if (opts.colorEach && bars.length === 1) {
    const only = bars[0]!;
    series = categories.map((c, i) => ({
      label: c,
      color: opts.colorEach![i % opts.colorEach!.length],
      values: only.values.map((v, j) => (j === i ? v : (null as unknown as number))),
    }));
  }
  // Two series side by side: one bar left of each category's tick, one right of it.
  const grouped = series.length === 2 && !opts.colorEach;
  const size = grouped ? 0.35 : 0.6;
  const barPaths = uPlot.paths.bars!;
  return mount(
    el,
    {
      width: width(el),
      height: opts.height ?? 200,
      legend: { show: false },
      scales: {
        x: { time: false, range: [-0.5, n - 0.5] },
        y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.15)] },
      },
      axes: [
        {
          splits: () => x,
          values: (u, splits) => {
            const room = u.bbox.width / uPlot.pxRatio / Math.max(1, n);
            return splits.map((i) => fitLabel(categories[i] ?? "", room - 10));
          },
          grid: { show: false },
        },
        { size: 56, incrs: COUNT_INCRS },
      ],
      series: [
        {},
        ...series.map((s, i) => ({
          label: s.label,
          stroke: s.color ?? PALETTE[i % PALETTE.length],
          fill: s.color ?? PALETTE[i % PALETTE.length],
          width: 0,
          points: { show: false },
          paths: barPaths({ size: [size, 90], align: grouped ? (i === 0 ? -1 : 1) : 0 }),
        })),
      ],
    },
    [x, ...series.map((s) => s.values)] as uPlot.AlignedData,
  );
}
