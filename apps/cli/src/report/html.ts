/**
 * The results report: one self-contained HTML file (inline CSS and SVG, no script, nothing
 * fetched at view time). Per Orientation: the Pareto chart of throughput per GPU against
 * interactivity, the ConcurrencyPoint table with validity and reasons, the Allocation history
 * and links to the logs and per-point records (relative to the report file).
 */
import { attemptText, slurmReason } from '../ops/render';
import { isAbsolute, join, relative } from 'node:path';
import {
  gpuHours,
  LEDGER_CATEGORIES,
  type AllocationRecord,
  type GpuLedger,
  type ReplicateStat,
} from '@infersweep/sweep';
import { esc, fmtNum, paretoFrontier, paretoSvg, type ChartSeries } from './chart';
import { addedTag, searchHtml, searchMarks } from './search-marks';
import type { PointRow, SweepResults } from './records';
import { historySection } from './history';
import { DEFAULT_X_AXIS, X_AXES, Y_LABEL, type XAxis } from './axes';

export interface ReportInput {
  sweeps: SweepResults[];
  /** folder the report is written to: links are made relative to it */
  outDir: string;
  generatedAt?: Date;
  /** Web UI link per sweep id */
  uiLinks?: Record<string, string>;
  /** Default: InferenceX's P90 E2E-normalized interactivity. */
  xAxis?: XAxis;
}

/** A point is plotted when it is valid and has both coordinates. */
export function plottable(p: PointRow, axis: XAxis = DEFAULT_X_AXIS): boolean {
  return p.valid === true && p.totalThroughputPerGpu !== null && X_AXES[axis].of(p) !== null;
}

/** A replicated point is plotted at its mean over allocations, with its 95 % CIs as error bars. */
export function seriesOf(s: SweepResults, axis: XAxis = DEFAULT_X_AXIS): ChartSeries {
  return {
    name: s.orientation,
    points: s.points
      .filter((p) => plottable(p, axis))
      .map((p) => {
        const rep = s.replicates?.find((r) => r.concurrency === p.concurrency);
        const xs = rep?.stats[X_AXES[axis].metric];
        const ys = rep?.stats.totalThroughputPerGpu;
        return {
          x: xs?.mean ?? X_AXES[axis].of(p)!,
          y: ys?.mean ?? p.totalThroughputPerGpu!,
          label: `c=${p.concurrency}`,
          ...(xs ? { xErr: [xs.lower, xs.upper] as [number, number] } : {}),
          ...(ys ? { yErr: [ys.lower, ys.upper] as [number, number] } : {}),
          detail: [
            rep ? `mean of ${rep.n} allocations (95 % CI shown)` : '',
            p.outputThroughputPerGpu !== null ? `output tok/s/GPU: ${fmtNum(p.outputThroughputPerGpu)}` : '',
            p.ttftP50Ms !== null ? `TTFT p50: ${fmtNum(p.ttftP50Ms)} ms` : '',
          ]
            .filter(Boolean)
            .join('\n'),
        };
      }),
  };
}

const pct = (v: number) => `${(100 * v).toFixed(1)} %`;

/** The replicated points: mean ± CI per metric, n, the between-allocation share, why they stopped. */
function replicatesTable(s: SweepResults): string {
  const rows = s.replicates;
  if (!rows || rows.length === 0) return '';
  const ci = (st: ReplicateStat | undefined) =>
    st
      ? `${fmtNum(st.mean)} <span class="muted">[${fmtNum(st.lower)}, ${fmtNum(st.upper)}] ±${pct(st.relativeHalfWidth)}${st.target !== undefined ? ` (target ${pct(st.target)})` : ''}</span>`
      : dash;
  const body = rows
    .map(
      (r) =>
        `<tr data-concurrency="${r.concurrency}"><td class="num">${r.concurrency}</td><td class="num">${r.n}</td><td>${ci(r.stats.totalThroughputPerGpu)}</td><td>${ci(r.stats.interactivityP50)}</td><td>${ci(r.stats.e2eNormInteractivityP90)}</td><td class="num">${r.betweenShare === null ? dash : pct(r.betweenShare)}</td><td>${esc(r.status)}${r.note ? `<div class="note">${esc(r.note)}</div>` : ''}</td><td>${r.jobIds.map(esc).join(', ')}</td></tr>`,
    )
    .join('');
  const short = rows.filter((r) => r.status === 'max-reached' || r.status === 'failed');
  return `<h3>Replicates across allocations</h3>
<p class="meta">Mean over independent allocations with its 95 % CI (t-interval on the allocation values; the calibrated sequential rule where a target is set, docs/statistics.md). Between-allocation share: the part of a replicate's variance that only more allocations remove.${short.length ? ` <b>Target not met within max for c=${short.map((r) => r.concurrency).join(', ')}</b>.` : ''}</p>
<table class="replicates"><thead><tr><th>conc</th><th>n</th><th>tok/s/GPU</th><th>tok/s/user p50</th><th>E2E-norm P90</th><th>between-allocation share</th><th>status</th><th>jobs</th></tr></thead><tbody>${body}</tbody></table>`;
}

const dash = '<span class="muted">–</span>';
const n = (v: number | null, suffix = '') => (v === null ? dash : `${fmtNum(v)}${suffix}`);

function link(outDir: string, path: string | null, text: string): string {
  if (!path) return '';
  const href = isAbsolute(path) ? relative(outDir, path) : path;
  return `<a href="${esc(href.split('/').map(encodeURIComponent).join('/'))}">${esc(text)}</a>`;
}

function statusBadge(p: PointRow): string {
  const cls =
    p.status === 'done' && p.valid !== false
      ? 'ok'
      : p.status === 'invalid' || p.valid === false
        ? 'bad'
        : p.status === 'failed'
          ? 'bad'
          : 'pending';
  const text = p.status === 'done' && p.valid === true ? 'valid' : p.status;
  return `<span class="badge ${cls}">${esc(text)}</span>`;
}

/** "0: 12 · 1: 11" — requests each DP engine served; an idle engine is flagged. */
function engineCell(p: PointRow): string {
  const e = p.engineRequests;
  if (e === null) return dash;
  const parts = Object.entries(e.perEngine).map(([id, v]) =>
    v === 0
      ? `<span class="bad-engine" title="idle DP rank">${esc(id)}: 0</span>`
      : `${esc(id)}: ${v === null ? '?' : fmtNum(v)}`,
  );
  return `${parts.join(' · ')}${e.phase === 'warmup' ? ' <span class="muted">(warmup)</span>' : ''}`;
}

function pointTable(s: SweepResults, outDir: string, axis: XAxis): string {
  const front = new Set(
    paretoFrontier(
      s.points
        .filter((p) => plottable(p, axis))
        .map((p) => ({ x: X_AXES[axis].of(p)!, y: p.totalThroughputPerGpu!, c: p.concurrency })),
    ).map((p) => p.c),
  );
  const rows = s.points.map((p) => {
    const why = [
      ...p.reasons,
      ...(p.lastError && !p.reasons.includes(p.lastError) ? [p.lastError] : []),
      ...(p.failures ?? []).map((f) => `attempt: ${attemptText(f)}${f.evidence ? ` — ${f.evidence}` : ''}`),
    ];
    const files = [link(outDir, p.resultPath, 'record'), link(outDir, p.requestsJsonl, 'requests')]
      .filter(Boolean)
      .join(' · ');
    return `<tr class="point ${p.valid === true ? 'valid' : ''}" data-concurrency="${p.concurrency}">
<td class="num">${p.concurrency}${front.has(p.concurrency) ? ' <span title="on the Pareto frontier" class="front">★</span>' : ''}${addedTag(s.search ?? null, p.concurrency)}</td>
<td>${statusBadge(p)}</td>
<td class="num">${n(p.totalThroughputPerGpu)}</td><td class="num">${n(p.outputThroughputPerGpu)}</td><td class="num">${n(p.interactivityP50)}</td><td class="num">${n(p.e2eNormInteractivityP90)}</td><td class="num">${n(p.goodputAttainment === null ? null : p.goodputAttainment * 100)}</td>
<td class="num">${n(p.ttftP50Ms)}</td><td class="num">${n(p.ttftP99Ms)}</td><td class="num">${n(p.itlP50Ms)}</td><td class="num">${n(p.e2elP50Ms === null ? null : p.e2elP50Ms / 1000)}</td>
<td class="num">${n(p.requestsProfiled)}</td><td class="engines">${engineCell(p)}</td><td class="num">${n(p.prefixCacheHitRate === null ? null : p.prefixCacheHitRate * 100)}</td><td class="num">${n(p.kvUsagePeakPct)}</td>
<td class="num">${n(p.specAcceptanceLength)}</td><td class="num">${energyCell(p)}</td><td class="num">${n(p.energy?.dollarsPerMillionTokens ?? null)}</td>
<td class="num">${n(p.requestsFailed)}</td><td class="num">${p.attempts}</td>
<td>${p.jobId ? esc(p.jobId) : dash}</td>
<td class="reasons">${why.length ? `<ul>${why.map((r) => `<li>${esc(r)}</li>`).join('')}</ul>` : ''}</td>
<td>${files || dash}</td></tr>`;
  });
  return `<div class="scroll"><table class="points"><thead><tr>
<th>conc.</th><th>status</th><th title="(input + output) tokens/s ÷ GPUs">tok/s/GPU</th><th>output tok/s/GPU</th><th title="p50 of 1/ITL">tok/s/user</th><th title="InferenceX: 1 / P90 of E2E latency ÷ output tokens">E2E-norm. tok/s/user P90</th><th title="requests meeting every goodput bound (search.slo.goodput) ÷ profiled requests">goodput %</th>
<th>TTFT p50 ms</th><th>TTFT p99 ms</th><th>ITL p50 ms</th><th>E2E p50 s</th><th>requests</th>
<th title="requests each DP engine served (vllm:request_success_total{engine}), over the profiling window">requests per engine</th>
<th title="server prefix-cache hits / queries (tokens)">prefix hit %</th><th title="peak vllm:kv_cache_usage_perc">KV peak %</th>
<th title="speculative decoding: 1 + accepted / drafts (vLLM spec-decode counters)">accept. len.</th><th title="GPU energy over the window: J per total token · total tokens/s per MW (power_valid as InferenceX)">J/token · tok/s/MW</th><th title="the worker's GPU-hour price × GPUs × window ÷ tokens">$/M tokens</th><th>errors</th><th>attempts</th><th>job</th><th>validity reasons / last error</th><th>files</th>
</tr></thead><tbody>
${rows.join('\n')}
</tbody></table></div>`;
}

function duration(a?: string, b?: string): string {
  if (!a || !b) return '';
  const s = Math.max(0, (Date.parse(b) - Date.parse(a)) / 1000);
  if (!Number.isFinite(s)) return '';
  return s >= 3600 ? `${(s / 3600).toFixed(1)} h` : s >= 60 ? `${Math.round(s / 60)} min` : `${Math.round(s)} s`;
}

function allocationTable(allocs: AllocationRecord[]): string {
  if (allocs.length === 0)
    return '<p class="muted">No allocation history (the sweep made none, or its workflow is gone and no progress snapshot was saved).</p>';
  const rows = allocs.map((a) => {
    const cls =
      a.ended === undefined ? 'pending' : a.ended === 'released' || a.ended === 'insufficient-time' ? 'ok' : 'bad';
    const cause = a.failureClass ? `class: ${a.failureClass}` : undefined;
    const excluded = a.excluded?.length ? `excluded (quarantine): ${a.excluded.join(', ')}` : undefined;
    return `<tr class="allocation"><td class="num">${a.attempt}</td><td>${a.jobId ? esc(a.jobId) : dash}</td><td>${esc(a.jobName)}</td><td>${a.nodes.length ? esc(a.nodes.join(', ')) : dash}</td>
<td>${esc(a.requestedAt ?? '')}</td><td>${esc(a.grantedAt ?? '')}</td><td>${esc(duration(a.grantedAt, a.endedAt))}</td>
<td><span class="badge ${cls}">${esc(a.ended ?? 'holding')}</span></td><td class="reasons">${[
      a.reason,
      cause,
      excluded,
      ...(a.warnings ?? []),
    ]
      .filter(slurmReason)
      .map((r) => esc(r))
      .join('<br>')}</td></tr>`;
  });
  return `<table class="allocations"><thead><tr><th>attempt</th><th>job id</th><th>job name</th><th>nodes</th><th>requested</th><th>granted</th><th>held</th><th>ended</th><th>reason</th></tr></thead><tbody>
${rows.join('\n')}
</tbody></table>`;
}

/** The GPU-hour ledger: GPU-hours per category and their share, beside the plan's worst case. */
function ledgerTable(l: GpuLedger | null): string {
  if (!l || l.heldGpuSeconds <= 0)
    return '<p class="muted">No GPU time recorded (no allocation ended, or a sweep started before the ledger).</p>';
  const rows = LEDGER_CATEGORIES.map(
    (k) =>
      `<tr><td>${esc(k)}</td><td class="num">${gpuHours(l.sweep[k])}</td><td class="num">${((100 * l.sweep[k]) / l.heldGpuSeconds).toFixed(1)}</td></tr>`,
  );
  const worst =
    l.worstCaseGpuSeconds === undefined ? '' : ` · the plan's worst case ${gpuHours(l.worstCaseGpuSeconds)} GPU-h`;
  return `<p class="meta">${gpuHours(l.heldGpuSeconds)} GPU-h held${worst} · queue wait ${Math.round(l.queueWaitSeconds)} s (${gpuHours(l.queueWaitGpuSeconds)} GPU-h waited for, not held)</p>
<table class="ledger"><thead><tr><th>category</th><th>GPU-h</th><th>% of held</th></tr></thead><tbody>
${rows.join('\n')}
</tbody></table>`;
}

function logsList(s: SweepResults, outDir: string): string {
  if (s.logs.length === 0)
    return '<p class="muted">No server logs captured yet (they are copied when a server stops).</p>';
  return `<ul class="logs">${s.logs.map((l) => `<li>${link(outDir, join(s.resultsDir, l), l)}</li>`).join('')}</ul>`;
}

function sweepSection(s: SweepResults, idx: number, input: ReportInput, showChart: boolean): string {
  const axis = input.xAxis ?? DEFAULT_X_AXIS;
  const valid = s.points.filter((p) => plottable(p, axis)).length;
  const counts = s.points.reduce<Record<string, number>>(
    (acc, p) => ((acc[p.status] = (acc[p.status] ?? 0) + 1), acc),
    {},
  );
  const ui = input.uiLinks?.[s.sweepId];
  const chart = showChart
    ? `<figure>${paretoSvg([seriesOf(s, axis)], { title: `${s.orientation}: throughput per GPU vs interactivity`, xLabel: X_AXES[axis].label, yLabel: Y_LABEL, id: `chart-${idx}`, styleOffset: idx, marks: searchMarks(s.search ?? null) })}
<figcaption>${valid} valid point(s) plotted${s.points.length - valid ? `; ${s.points.length - valid} not plotted (invalid, failed, skipped or not run — see the table)` : ''}. Dashed line: Pareto frontier.${s.replicates?.length ? ' Replicated points at their mean over allocations, bars: 95 % CI.' : ''}</figcaption></figure>`
    : '';
  return `<section class="sweep" id="orientation-${esc(s.orientation)}" data-sweep-id="${esc(s.sweepId)}">
<h2>Orientation <code>${esc(s.orientation)}</code></h2>
<p class="meta">${s.topology ? `${esc(s.topology)} · ` : ''}${s.gpus ? `${s.gpus} GPUs · ` : ''}sweep <code>${esc(s.sweepId)}</code>${s.phase ? ` · phase <b>${esc(s.phase)}</b>` : ''}${ui ? ` · <a href="${esc(ui)}">Temporal Web UI</a>` : ''}
<br>${Object.entries(counts)
    .map(([k, v]) => `${v} ${esc(k)}`)
    .join(
      ', ',
    )} · results <code>${esc(relative(input.outDir, s.resultsDir) || '.')}</code>${s.source !== 'temporal' ? ` · statuses from ${s.source === 'snapshot' ? 'the saved progress snapshot' : 'result files only (workflow not reachable)'}` : ''}</p>
${chart}
${searchHtml(s.search ?? null)}
${replicatesTable(s)}
<h3>Concurrency points</h3>
${pointTable(s, input.outDir, axis)}
<h3>Allocation history</h3>
${allocationTable(s.allocations)}
<h3>GPU time</h3>
${ledgerTable(s.ledger ?? null)}
<h3>Logs</h3>
${logsList(s, input.outDir)}
</section>`;
}

const CSS = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;color:#111;margin:0;background:#f7f7f8}
main{max-width:1280px;margin:0 auto;padding:24px 28px 64px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:32px 0 6px;border-top:1px solid #ddd;padding-top:20px}h3{font-size:14px;margin:18px 0 6px;color:#333}
.meta{color:#444;margin:0 0 10px}.muted{color:#888}code{font:12px ui-monospace,SFMono-Regular,Menlo,monospace;background:#eef0f3;padding:1px 4px;border-radius:3px}
figure{margin:8px 0 4px;background:#fff;border:1px solid #e3e3e6;border-radius:6px;padding:8px;display:inline-block;max-width:100%}figure svg{max-width:100%;height:auto}
figcaption{color:#555;font-size:12px;padding:4px 6px}
div.scroll{overflow-x:auto;max-width:100%}table{border-collapse:collapse;background:#fff;font-size:12.5px;margin:4px 0 8px;width:100%}
th,td{border:1px solid #e3e3e6;padding:4px 7px;vertical-align:top;text-align:left}th{background:#f0f1f4;font-weight:600;white-space:nowrap}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}td.reasons{max-width:340px;color:#7a271a}td.reasons ul{margin:0;padding-left:16px}
.badge{display:inline-block;padding:0 7px;border-radius:9px;font-size:11.5px;font-weight:600}.badge.ok{background:#dcfce7;color:#14532d}.badge.bad{background:#fee2e2;color:#7f1d1d}.badge.pending{background:#e5e7eb;color:#374151}
.bad-engine{color:#b91c1c;font-weight:600}td.engines{white-space:nowrap}
.added{display:inline-block;padding:0 5px;border-radius:8px;font-size:10.5px;background:#ede9fe;color:#4c1d95;margin-left:4px}ul.search{margin:4px 0 8px;padding-left:18px}
table.history tr.bad td{background:#fef2f2}table.history tr.good td{background:#f0fdf4}
.front{color:#b45309}.cards{display:flex;gap:12px;flex-wrap:wrap;margin:14px 0}.card{background:#fff;border:1px solid #e3e3e6;border-radius:6px;padding:8px 14px;min-width:130px}.card b{display:block;font-size:20px}
.note{font-size:12px;color:#555;max-width:900px}ul.logs{columns:2;font-size:12.5px}
`;

/** The whole report page. */
export function renderReport(input: ReportInput): string {
  const { sweeps } = input;
  const first = sweeps[0];
  const generated = (input.generatedAt ?? new Date()).toISOString();
  const model = first?.model ?? '?';
  const cluster = [...new Set(sweeps.map((s) => s.cluster))].join(', ');
  const axis = input.xAxis ?? DEFAULT_X_AXIS;
  const allPoints = sweeps.flatMap((s) => s.points);
  const valid = allPoints.filter((p) => plottable(p, axis)).length;
  const invalid = allPoints.filter((p) => p.valid === false || p.status === 'invalid').length;
  const failed = allPoints.filter((p) => p.status === 'failed').length;
  const best = allPoints
    .filter((p) => plottable(p, axis))
    .sort((a, b) => b.totalThroughputPerGpu! - a.totalThroughputPerGpu!)[0];
  const overview =
    sweeps.length > 1
      ? `<h2>All orientations</h2><figure>${paretoSvg(
          sweeps.map((s) => seriesOf(s, axis)),
          {
            title: `${model}: throughput per GPU vs interactivity, all orientations`,
            xLabel: X_AXES[axis].label,
            yLabel: Y_LABEL,
            id: 'chart-all',
            height: 480,
          },
        )}
<figcaption>One marker per valid point, one colour and shape per orientation; dashed lines are each orientation's Pareto frontier.</figcaption></figure>`
      : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>infersweep report — ${esc(model)} on ${esc(cluster)}</title>
<style>${CSS}</style></head>
<body><main>
<h1>${esc(model)} on <code>${esc(cluster)}</code></h1>
<p class="meta">config <code>${esc(first?.configName ?? '?')}</code>${first?.image ? ` · image <code>${esc(first.image)}</code>` : ''} · generated ${esc(generated)} by infersweep</p>
<div class="cards">
<div class="card"><b>${sweeps.length}</b>orientation(s)</div>
<div class="card"><b>${allPoints.length}</b>concurrency points</div>
<div class="card"><b>${valid}</b>valid, plotted</div>
<div class="card"><b>${invalid + failed}</b>invalid or failed</div>
${best ? `<div class="card"><b>${fmtNum(best.totalThroughputPerGpu!)}</b>best tok/s/GPU (${esc(sweeps.find((s) => s.points.includes(best))?.orientation ?? '')}, c=${best.concurrency})</div>` : ''}
</div>
<p class="note">Throughput per GPU counts input <em>plus</em> output tokens per second divided by the GPUs of the deployment (InferenceX <code>tput_per_gpu</code>); the table also shows output-only. Interactivity is tokens per second per user at the median, 1 / ITL p50. Only valid points are plotted: a point is invalid when one of its validity gates failed (reasons in the table).</p>
${overview}
${sweeps.map((s, i) => sweepSection(s, i, input, true)).join('\n')}
${historySection(sweeps)}
</main></body></html>
`;
}

/** One CSV row per point (RFC 4180 quoting). */
export const CSV_COLUMNS = [
  'sweep_id',
  'orientation',
  'concurrency',
  'status',
  'valid',
  'attempts',
  'tput_per_gpu',
  'output_tput_per_gpu',
  'interactivity_p50',
  'e2e_norm_intvty_p90',
  'goodput_attainment',
  'goodput_ci_lower',
  'goodput_ci_upper',
  'ttft_p50_ms',
  'ttft_p99_ms',
  'itl_p50_ms',
  'e2el_p50_ms',
  'e2el_p99_ms',
  'requests_profiled',
  'requests_failed',
  'job_id',
  'reasons',
  'result_path',
  'replicates_n',
  'replicate_status',
  'tput_per_gpu_mean',
  'tput_per_gpu_ci_lower',
  'tput_per_gpu_ci_upper',
  'between_allocation_share',
  'spec_acceptance_length',
  'power_valid',
  'joules_per_token',
  'tokens_per_s_per_mw',
  'usd_per_m_tokens',
] as const;

/** J/token and tokens/s/MW of a point, or why not: no telemetry (—) or power not valid. */
function energyCell(p: PointRow): string {
  if (p.energy === null) return dash;
  if (!p.energy.powerValid)
    return '<span title="power_valid is false: the telemetry does not cover the window">invalid</span>';
  return `${n(p.energy.joulesPerToken)} · ${n(p.energy.tokensPerSecondPerMw)}`;
}

export function csvCell(v: unknown): string {
  if (v === null || v === undefined) return '';
  const s = String(v);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** A point's replicate columns (empty when it was not replicated). */
function replicateCells(s: SweepResults, c: number): unknown[] {
  const r = s.replicates?.find((x) => x.concurrency === c);
  const t = r?.stats.totalThroughputPerGpu;
  return r ? [r.n, r.status, t?.mean, t?.lower, t?.upper, r.betweenShare] : [null, null, null, null, null, null];
}

export function toCsv(sweeps: SweepResults[]): string {
  const lines = [CSV_COLUMNS.join(',')];
  for (const s of sweeps) {
    for (const p of s.points) {
      const row = [
        s.sweepId,
        s.orientation,
        p.concurrency,
        p.status,
        p.valid === undefined ? '' : p.valid,
        p.attempts,
        p.totalThroughputPerGpu,
        p.outputThroughputPerGpu,
        p.interactivityP50,
        p.e2eNormInteractivityP90,
        p.goodputAttainment,
        p.goodputCiLower,
        p.goodputCiUpper,
        p.ttftP50Ms,
        p.ttftP99Ms,
        p.itlP50Ms,
        p.e2elP50Ms,
        p.e2elP99Ms,
        p.requestsProfiled,
        p.requestsFailed,
        p.jobId,
        [...p.reasons, ...(p.lastError && !p.reasons.includes(p.lastError) ? [p.lastError] : [])].join('; '),
        p.resultPath,
        ...replicateCells(s, p.concurrency),
        p.specAcceptanceLength,
        p.energy === null ? null : p.energy.powerValid,
        p.energy?.joulesPerToken,
        p.energy?.tokensPerSecondPerMw,
        p.energy?.dollarsPerMillionTokens,
      ];
      lines.push(row.map(csvCell).join(','));
    }
  }
  return `${lines.join('\r\n')}\r\n`;
}
