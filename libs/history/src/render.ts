/**
 * How verdicts and series read: plain text for the CLI (`history`, `compare`) and a tiny inline SVG
 * trend for the report. Pure.
 */
import { inTimeOrder } from './detect';
import {
  METRIC_LABELS,
  seriesId,
  type HistoryPoint,
  type MetricName,
  type PointVerdict,
  type TrendPoint,
} from './schema';
import type { WholeSeriesAnalysis } from './analyze';
import type { RunVerdict } from './verdict';

export function fmtNum(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '—';
  const a = Math.abs(v);
  return a >= 100 ? v.toFixed(0) : a >= 10 ? v.toFixed(1) : v.toFixed(2);
}

export function fmtChange(rel: number | null | undefined): string {
  if (rel === null || rel === undefined || !Number.isFinite(rel)) return '—';
  return `${rel >= 0 ? '+' : ''}${(rel * 100).toFixed(1)} %`;
}

/** Confidence of a change: 1 - p, as a percentage. */
export function fmtConfidence(p: number | null | undefined): string {
  return p === null || p === undefined ? '—' : `${((1 - p) * 100).toFixed(1)} %`;
}

const pad = (rows: string[][]): string => {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
};

/** One line per tested metric of each point: this run, the baseline, the change, its confidence, the runs compared; then what each change is attributed to. */
export function pointVerdictsText(points: readonly PointVerdict[]): string {
  const rows: string[][] = [
    ['point', 'metric', 'this run', 'baseline', 'change', 'confidence', 'status', 'compared with'],
  ];
  for (const p of points)
    for (const m of p.metrics)
      rows.push([
        `c=${p.concurrency}`,
        METRIC_LABELS[m.metric],
        fmtNum(m.value),
        fmtNum(m.baseline),
        fmtChange(m.relativeChange),
        fmtConfidence(m.pValue),
        `${m.status}${m.pending ? ' (pending)' : ''}${m.secondary ? ' (secondary)' : ''}`,
        m.baselineRunIds.length
          ? `${m.baselineRunIds.length} runs (${m.baselineRunIds[0]} … ${m.baselineRunIds.at(-1)})`
          : '—',
      ]);
  const attributions = points.flatMap((p) =>
    p.metrics.flatMap((m) =>
      m.change
        ? [
            `c=${p.concurrency} ${METRIC_LABELS[m.metric]}: ${m.change.direction} from ${m.change.previousRunId} to ${m.change.firstRunId}: ${
              m.change.attribution.length
                ? m.change.attribution.map((a) => `${a.field} ${a.before} → ${a.after}`).join(', ')
                : 'nothing in the run context changed'
            }`,
          ]
        : [],
    ),
  );
  return [pad(rows), ...attributions].join('\n');
}

/** The points a verdict could not measure, one line: `unmeasured: 2 (c=4, c=8): …`, or nothing. */
function unmeasuredLine(v: RunVerdict): string {
  const pts = v.points.filter((p) => p.status === 'unmeasured').map((p) => `c=${p.concurrency}`);
  return pts.length === 0
    ? ''
    : `unmeasured: ${pts.length} (${pts.join(', ')}): invalid or failed where a measurement was due (a finding, not a pass)\n`;
}

/**
 * The family a verdict controlled and what it costs in false alarms (docs/history.md "The bound"):
 * `family: 2 primary units (… tests), BH q 0.05: expected false alarms per night ≤ 0.05 (before the gate)`.
 */
export function familyLine(v: RunVerdict): string {
  const f = v.family;
  if (!f) return '';
  const secondary = f.secondaryUnits ? `, ${f.secondaryUnits} secondary units (reported, not counted)` : '';
  const of = f.night ? `the night ${f.night} (${f.runs} sweeps, one family)` : 'this run';
  return `family: ${f.primaryUnits} primary unit(s) (orientation × metric) of ${f.tests} tested series${secondary}; BH at q ${f.q} and a gate of max(${fmtChange(v.settings.minRelativeChange)}, ${v.settings.gateSigmas} run-SDs): expected false alarms of ${of} ≤ ${f.falseAlarmBound} from the p-values alone, near 0 with the gate at 3 % noise (docs/history.md "Measured")\n`;
}

/** A run's verdict: `regressions: none | N`, the points it could not measure, its family, then its points. */
export function verdictText(v: RunVerdict): string {
  const skipped = v.skippedLines
    ? `warning: ${v.skippedLines} line(s) of the history store did not validate and were skipped: their runs are missing from the baselines\n`
    : '';
  const head = `run ${v.runId}: regressions: ${v.regressions === 0 ? 'none' : v.regressions}\n`;
  return `${head}${unmeasuredLine(v)}${skipped}${familyLine(v)}${pointVerdictsText(v.points)}`;
}

/** A series as a table, oldest run first, with the change points found along it. */
export function seriesText(
  points: readonly HistoryPoint[],
  verdicts: readonly PointVerdict[],
  metrics: readonly MetricName[],
): string {
  const ordered = inTimeOrder(points);
  if (ordered.length === 0) return '(no runs)';
  const byRun = new Map(verdicts.map((v) => [v.runId, v]));
  const rows: string[][] = [['run', 'time', 'valid', ...metrics.map((m) => METRIC_LABELS[m]), 'verdict', 'context']];
  let prev: HistoryPoint | undefined;
  for (const p of ordered) {
    const v = byRun.get(p.runId);
    const ctx = prev
      ? Object.entries(p.context)
          .filter(([k, val]) => prev!.context[k as keyof typeof p.context] !== val)
          .map(([k, val]) => `${k}=${val}`)
          .join(' ')
      : `image=${p.context.image} engine=${p.context.engineVersion} cluster=${p.context.cluster}`;
    rows.push([
      p.runId,
      p.time,
      p.valid ? 'yes' : 'no',
      ...metrics.map((m) => fmtNum(p.metrics[m])),
      v?.status ?? '',
      ctx,
    ]);
    prev = p;
  }
  return [`series ${seriesId(ordered[0]!.key)} (${ordered.length} runs)`, pad(rows)].join('\n');
}

/** A sparkline of a series' recent values as inline SVG; the last run is a dot, invalid runs hollow. */
export function trendSvg(
  trend: readonly TrendPoint[],
  opts: { width?: number; height?: number; highlight?: string } = {},
): string {
  const w = opts.width ?? 90;
  const h = opts.height ?? 22;
  const vals = trend.map((t) => t.value).filter((v): v is number => v !== null && Number.isFinite(v));
  if (vals.length === 0) return `<svg width="${w}" height="${h}" role="img" aria-label="no values"></svg>`;
  const lo = Math.min(...vals);
  const hi = Math.max(...vals);
  const span = hi - lo || Math.abs(hi) || 1;
  const x = (i: number) => (trend.length === 1 ? w / 2 : 3 + (i * (w - 6)) / (trend.length - 1));
  const y = (v: number) => h - 3 - ((v - lo) / span) * (h - 6);
  const pts = trend.flatMap((t, i) =>
    t.value === null || !t.valid ? [] : [`${x(i).toFixed(1)},${y(t.value).toFixed(1)}`],
  );
  const dots = trend
    .map((t, i) =>
      t.value === null
        ? ''
        : `<circle cx="${x(i).toFixed(1)}" cy="${y(t.value).toFixed(1)}" r="${i === trend.length - 1 ? 2.5 : 1.5}" fill="${
            !t.valid ? 'none' : i === trend.length - 1 ? (opts.highlight ?? '#c0392b') : '#555'
          }" stroke="#555" stroke-width="0.6"/>`,
    )
    .join('');
  const label = `trend of ${trend.length} runs, ${fmtNum(vals[0])} to ${fmtNum(vals.at(-1))}`;
  return `<svg width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" role="img" aria-label="${label}"><polyline points="${pts.join(' ')}" fill="none" stroke="#888" stroke-width="1"/>${dots}</svg>`;
}

/** The whole-series pass of one series and metric (`history analyze`): change points, steps and drifts, the nightly's changes placed. */
export function wholeSeriesText(a: WholeSeriesAnalysis): string {
  const lines = [`series ${a.series} ${METRIC_LABELS[a.metric]} (${a.runs} valid runs)`];
  lines.push(
    `  change points: ${
      a.changePoints.length
        ? a.changePoints.map((c) => `${c.runId} (${fmtChange(c.relativeChange)}, p ${c.pValue.toFixed(3)})`).join(', ')
        : 'none'
    }`,
  );
  for (const sh of a.shifts)
    lines.push(
      sh.kind === 'drift'
        ? `  drift (${sh.direction}): from ${sh.fromRunId} to ${sh.toRunId}, ${sh.changePoints} change points, ${fmtChange(sh.relativeChange)} in all`
        : `  step (${sh.direction}): at ${sh.fromRunId}, ${fmtChange(sh.relativeChange)}`,
    );
  for (const r of a.relocations)
    lines.push(
      r.status === 'confirmed'
        ? `  nightly change at ${r.nightlyRunId}: confirmed by the whole series`
        : r.status === 'moved'
          ? `  nightly change at ${r.nightlyRunId}: moved to ${r.wholeSeriesRunId} by the whole series`
          : `  nightly change at ${r.nightlyRunId}: not confirmed by the whole series`,
    );
  return lines.join('\n');
}
