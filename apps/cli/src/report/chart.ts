/**
 * The Pareto chart as a self-contained SVG string (no script, no fonts, no network): throughput
 * per GPU (y) against interactivity (x, tok/s/user). Both axes are "more is better", so the
 * frontier is the set of points no other point beats on both.
 */

export interface ChartPoint {
  x: number;
  y: number;
  label: string;
  /** tooltip lines */
  detail?: string;
  /** 95 % CIs over allocations (replicates): drawn as error bars, [lower, upper] */
  xErr?: [number, number];
  yErr?: [number, number];
}

export interface ChartSeries {
  name: string;
  points: ChartPoint[];
}

/** A labelled ring around one point of a series (the adaptive search's SLO limit or knee). */
export interface ChartMark {
  kind: 'slo-limit' | 'knee';
  /** the point's concurrency (its label is `c=<concurrency>`) */
  concurrency: number;
  text: string;
  /** tooltip: the two points that bracket it */
  detail: string;
}

export interface ChartOptions {
  title: string;
  xLabel: string;
  yLabel: string;
  width?: number;
  height?: number;
  /** id prefix, unique per chart in one page */
  id?: string;
  /** colour/shape of the first series (so one orientation keeps its colour across charts) */
  styleOffset?: number;
  /** marks on the first series' points (./search-marks.ts) */
  marks?: readonly ChartMark[];
}

/** Okabe–Ito: distinguishable for colour-blind readers, readable on white. */
export const PALETTE = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#000000', '#F0E442'];
const MARKERS = ['circle', 'square', 'diamond', 'triangle'] as const;

/** Points on the Pareto frontier (maximise x and y), sorted by x ascending. */
export function paretoFrontier<T extends { x: number; y: number }>(pts: readonly T[]): T[] {
  const sorted = [...pts].sort((a, b) => b.x - a.x || b.y - a.y);
  const out: T[] = [];
  let bestY = -Infinity;
  for (const p of sorted) {
    if (p.y > bestY) {
      out.push(p);
      bestY = p.y;
    }
  }
  return out.reverse();
}

/** "Nice" axis ticks from 0 to ≥ max (1, 2, 2.5, 5 × 10^k steps). */
export function niceTicks(max: number, target = 5): number[] {
  if (!(max > 0)) return [0, 1];
  const raw = max / target;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
  const ticks: number[] = [];
  for (let v = 0; v < max + step * 0.999; v += step) ticks.push(Number(v.toPrecision(12)));
  if (ticks[ticks.length - 1]! < max) ticks.push(Number((ticks[ticks.length - 1]! + step).toPrecision(12)));
  return ticks;
}

export function fmtNum(v: number): string {
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 10_000) return `${(v / 1000).toFixed(a >= 100_000 ? 0 : 1)}k`;
  if (a >= 100) return v.toFixed(0);
  if (a >= 10) return v.toFixed(1).replace(/\.0$/, '');
  return v.toFixed(2).replace(/0$/, '').replace(/\.0?$/, '');
}

export function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function marker(
  shape: (typeof MARKERS)[number],
  cx: number,
  cy: number,
  color: string,
  cls: string,
  attrs: string,
): string {
  const r = 5.5;
  const common = `class="${cls}" fill="${color}" stroke="#fff" stroke-width="1.2" ${attrs}`;
  switch (shape) {
    case 'square':
      return `<rect x="${(cx - r).toFixed(1)}" y="${(cy - r).toFixed(1)}" width="${2 * r}" height="${2 * r}" ${common}/>`;
    case 'diamond':
      return `<path d="M${cx.toFixed(1)} ${(cy - r - 1).toFixed(1)}L${(cx + r + 1).toFixed(1)} ${cy.toFixed(1)}L${cx.toFixed(1)} ${(cy + r + 1).toFixed(1)}L${(cx - r - 1).toFixed(1)} ${cy.toFixed(1)}Z" ${common}/>`;
    case 'triangle':
      return `<path d="M${cx.toFixed(1)} ${(cy - r - 1).toFixed(1)}L${(cx + r + 1).toFixed(1)} ${(cy + r).toFixed(1)}L${(cx - r - 1).toFixed(1)} ${(cy + r).toFixed(1)}Z" ${common}/>`;
    default:
      return `<circle cx="${cx.toFixed(1)}" cy="${cy.toFixed(1)}" r="${r}" ${common}/>`;
  }
}

/** The plot area of one chart: margins, size, the axes' ticks and the data → pixel maps. */
interface PlotFrame {
  W: number;
  H: number;
  m: { l: number; r: number; t: number; b: number };
  pw: number;
  ph: number;
  xt: number[];
  yt: number[];
  X: (v: number) => number;
  Y: (v: number) => number;
}

function plotFrame(series: readonly ChartSeries[], opts: ChartOptions): PlotFrame {
  const W = opts.width ?? 760;
  const H = opts.height ?? 440;
  const m = { l: 72, r: 24, t: 44, b: 58 + 18 * Math.ceil(series.length / 3) };
  const pw = W - m.l - m.r;
  const ph = H - m.t - m.b;
  const all = series.flatMap((s) => s.points);
  const xt = niceTicks(Math.max(0, ...all.map((p) => p.xErr?.[1] ?? p.x)) * 1.05);
  const yt = niceTicks(Math.max(0, ...all.map((p) => p.yErr?.[1] ?? p.y)) * 1.05);
  const xMax = xt[xt.length - 1]!;
  const yMax = yt[yt.length - 1]!;
  return { W, H, m, pw, ph, xt, yt, X: (v) => m.l + (v / xMax) * pw, Y: (v) => m.t + ph - (v / yMax) * ph };
}

/**
 * One SVG: every series' points as markers (class `marker`, data-series/data-label), a dashed
 * line through each series' Pareto frontier, axes with nice ticks, a legend. Empty series are
 * listed in the legend as "no valid points".
 */
export function paretoSvg(series: readonly ChartSeries[], opts: ChartOptions): string {
  const f = plotFrame(series, opts);
  const { W, H, m } = f;
  const id = opts.id ?? 'chart';
  const off = opts.styleOffset ?? 0;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" id="${esc(id)}" class="pareto" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${esc(opts.title)}" font-family="system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif">`,
    `<rect width="${W}" height="${H}" fill="#fff"/>`,
    `<text x="${m.l}" y="24" font-size="15" font-weight="600" fill="#111">${esc(opts.title)}</text>`,
    ...axes(
      f,
      opts,
      series.every((s) => s.points.length === 0),
    ),
    ...series.flatMap((s, j) => seriesMarks(f, s, j + off, opts)),
    ...concurrencyMarks(f, series, opts),
    ...series.flatMap((s, j) => legendEntry(f, s, j, j + off)),
    '</svg>',
  ].join('\n');
}

/** Grid, ticks, the frame and the axis labels; a note when there is nothing to plot. */
function axes({ m, pw, ph, xt, yt, X, Y }: PlotFrame, opts: ChartOptions, empty: boolean): string[] {
  const o: string[] = [];
  for (const v of yt) {
    o.push(`<line x1="${m.l}" x2="${m.l + pw}" y1="${Y(v).toFixed(1)}" y2="${Y(v).toFixed(1)}" stroke="#e5e7eb"/>`);
    o.push(
      `<text x="${m.l - 8}" y="${(Y(v) + 4).toFixed(1)}" font-size="11" text-anchor="end" fill="#444">${fmtNum(v)}</text>`,
    );
  }
  for (const v of xt) {
    o.push(`<line y1="${m.t}" y2="${m.t + ph}" x1="${X(v).toFixed(1)}" x2="${X(v).toFixed(1)}" stroke="#f0f1f3"/>`);
    o.push(
      `<text x="${X(v).toFixed(1)}" y="${m.t + ph + 16}" font-size="11" text-anchor="middle" fill="#444">${fmtNum(v)}</text>`,
    );
  }
  o.push(`<rect x="${m.l}" y="${m.t}" width="${pw}" height="${ph}" fill="none" stroke="#9ca3af"/>`);
  o.push(
    `<text x="${m.l + pw / 2}" y="${m.t + ph + 36}" font-size="12" text-anchor="middle" fill="#111">${esc(opts.xLabel)}</text>`,
  );
  o.push(
    `<text transform="translate(16 ${m.t + ph / 2}) rotate(-90)" font-size="12" text-anchor="middle" fill="#111">${esc(opts.yLabel)}</text>`,
  );
  if (empty) {
    o.push(
      `<text x="${m.l + pw / 2}" y="${m.t + ph / 2}" font-size="13" text-anchor="middle" fill="#6b7280">no valid points to plot</text>`,
    );
  }
  return o;
}

/** One series (style `i`): its frontier as a dashed line, then each point's marker, tooltip and label. */
function seriesMarks({ X, Y }: PlotFrame, s: ChartSeries, i: number, opts: ChartOptions): string[] {
  const o: string[] = [];
  const color = PALETTE[i % PALETTE.length]!;
  const shape = MARKERS[i % MARKERS.length]!;
  const front = paretoFrontier(s.points);
  if (front.length > 1) {
    const d = front.map((p, k) => `${k === 0 ? 'M' : 'L'}${X(p.x).toFixed(1)} ${Y(p.y).toFixed(1)}`).join('');
    o.push(
      `<path class="frontier" data-series="${esc(s.name)}" d="${d}" fill="none" stroke="${color}" stroke-width="2" stroke-dasharray="5 4" opacity="0.8"/>`,
    );
  }
  for (const p of [...s.points].sort((a, b) => a.x - b.x)) {
    const onFront = front.includes(p);
    o.push(`<g>`);
    o.push(...errorBars({ X, Y }, p, color));
    o.push(
      marker(
        shape,
        X(p.x),
        Y(p.y),
        color,
        onFront ? 'marker on-frontier' : 'marker',
        `data-series="${esc(s.name)}" data-label="${esc(p.label)}"`,
      ),
    );
    o.push(
      `<title>${esc(`${s.name} ${p.label}\n${opts.xLabel}: ${fmtNum(p.x)}\n${opts.yLabel}: ${fmtNum(p.y)}${p.detail ? `\n${p.detail}` : ''}`)}</title></g>`,
    );
    o.push(
      `<text x="${(X(p.x) + 8).toFixed(1)}" y="${(Y(p.y) - 7).toFixed(1)}" font-size="10" fill="#374151">${esc(p.label)}</text>`,
    );
  }
  return o;
}

/** A point's CIs over allocations as whiskers with caps (class `error-bar`, data-axis x or y). */
function errorBars({ X, Y }: Pick<PlotFrame, 'X' | 'Y'>, p: ChartPoint, color: string): string[] {
  const o: string[] = [];
  const cap = 4;
  const line = (axis: 'x' | 'y', x1: number, y1: number, x2: number, y2: number) =>
    `<line class="error-bar" data-axis="${axis}" x1="${x1.toFixed(1)}" y1="${y1.toFixed(1)}" x2="${x2.toFixed(1)}" y2="${y2.toFixed(1)}" stroke="${color}" stroke-width="1.3"/>`;
  if (p.yErr) {
    const [lo, hi] = p.yErr.map(Y) as [number, number];
    const x = X(p.x);
    o.push(line('y', x, lo, x, hi), line('y', x - cap, lo, x + cap, lo), line('y', x - cap, hi, x + cap, hi));
  }
  if (p.xErr) {
    const [lo, hi] = p.xErr.map(X) as [number, number];
    const y = Y(p.y);
    o.push(line('x', lo, y, hi, y), line('x', lo, y - cap, lo, y + cap), line('x', hi, y - cap, hi, y + cap));
  }
  return o;
}

/** The marked concurrencies (SLO limit, …) circled on the first series' points. */
function concurrencyMarks({ X, Y }: PlotFrame, series: readonly ChartSeries[], opts: ChartOptions): string[] {
  const o: string[] = [];
  for (const [k, mk] of (opts.marks ?? []).entries()) {
    const p = series[0]?.points.find((q) => q.label === `c=${mk.concurrency}`);
    if (!p) continue;
    const color = mk.kind === 'slo-limit' ? '#B91C1C' : '#6D28D9';
    o.push(
      `<g class="mark ${mk.kind}" data-concurrency="${mk.concurrency}"><circle cx="${X(p.x).toFixed(1)}" cy="${Y(p.y).toFixed(1)}" r="11" fill="none" stroke="${color}" stroke-width="2"/>` +
        `<text x="${(X(p.x) + 14).toFixed(1)}" y="${(Y(p.y) + 16 + 13 * k).toFixed(1)}" font-size="11" font-weight="600" fill="${color}">${esc(mk.text)}</text><title>${esc(`${mk.text}\n${mk.detail}`)}</title></g>`,
    );
  }
  return o;
}

/** The legend entry of series `j` (style `i`), three to a row under the plot. */
function legendEntry({ m, pw, ph }: PlotFrame, s: ChartSeries, j: number, i: number): string[] {
  const lx = m.l + (j % 3) * (pw / 3);
  const ly = m.t + ph + 54 + Math.floor(j / 3) * 18;
  return [
    marker(MARKERS[i % MARKERS.length]!, lx + 6, ly - 4, PALETTE[i % PALETTE.length]!, 'legend-marker', ''),
    `<text x="${lx + 18}" y="${ly}" font-size="12" fill="#111">${esc(s.name)}${s.points.length === 0 ? ' (no valid points)' : ''}</text>`,
  ];
}
