/**
 * A run's points of history, read from its results folder (libs/core ResultsLayout: `plan.json`
 * and `points/c<N>/result.json`). The plan gives the series key and most of the run context; each
 * point record gives its launch fingerprint, validity and headline metrics. Nothing here moves or
 * rewrites a file: a record that does not validate is reported and left out.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { PLAN_FILE, ResultsLayout } from '@infersweep/core';
import { pointResultSchema, type PointResult } from '@infersweep/agentx';
import { sweepPlanSchema, type ReplicateMetric, type SweepPlan } from '@infersweep/topology';
import { replicateInterval, SUMMARY_FIELD } from '@infersweep/sweep';
import { z } from 'zod';
import { NO_METRICS, historyPointSchema, type HeadlineMetrics, type HistoryPoint, type MetricName } from './schema';

export interface ExtractedRun {
  runId: string;
  points: HistoryPoint[];
  /** what was left out and why (a record that does not validate, a plan that does not parse) */
  skipped: string[];
}

const ms = (s: number | null | undefined) => (s === null || s === undefined ? null : s * 1000);
const orNull = (x: number | null | undefined) => (x === undefined || x === null || !Number.isFinite(x) ? null : x);

/** The requests the profile issued (the error rate's denominator). */
const issuedRequests = (r: PointResult): number =>
  Math.max(0, r.request_accounting.records_total - r.request_accounting.records_warmup_dropped);

/**
 * A point's record, from its newest window: a point the search measured again (ResultsLayout
 * `window-<k>`) is its latest measurement, the one the sweep's state holds; else its first.
 */
function newestWindowRecord(layout: ResultsLayout, concurrency: number): string {
  const windows = readdirSync(layout.pointDir(concurrency))
    .map((f) => /^window-(\d+)$/.exec(f)?.[1])
    .filter((w): w is string => w !== undefined)
    .map(Number)
    .sort((a, b) => b - a);
  const newest = windows.map((w) => layout.pointRecord(concurrency, w)).find((f) => existsSync(f));
  return newest ?? layout.pointRecord(concurrency);
}

/** The headline metrics of a point record (the record stores seconds; history stores ms). */
export function headlineMetrics(r: PointResult): HeadlineMetrics {
  const m = r.request_metrics;
  const acc = r.request_accounting;
  const issued = issuedRequests(r);
  return {
    throughputPerGpu: orNull(m.throughput.per_gpu.total_tput_tps),
    outputThroughputPerGpu: orNull(m.throughput.per_gpu.output_tput_tps),
    interactivityP50: orNull(m.latency.intvty.p50),
    ttftP50Ms: orNull(ms(m.latency.ttft.p50)),
    ttftP99Ms: orNull(ms(m.latency.ttft.p99)),
    itlP50Ms: orNull(ms(m.latency.itl.p50)),
    itlP99Ms: orNull(ms(m.latency.itl.p99)),
    errorRate: issued > 0 ? Math.min(1, acc.records_error_dropped / issued) : null,
  };
}

/**
 * What the client replayed, as the series key holds it: the dataset's source and loader, its file's
 * name (not its path: a staged copy lives in a per-run folder) and its seed, e.g.
 * `file/weka/traces.jsonl@7`.
 */
export function workloadOf(d: PointResult['dataset']): string {
  return (
    [d.source_type, d.loader, d.path === null ? null : basename(d.path)].filter((x) => x).join('/') +
    (d.seed === null ? '' : `@${d.seed}`)
  );
}

/**
 * The file a scheduled sweep leaves in its results folder when it stores its points (./record.ts
 * `storeRun`): the schedule that started its run and the run (the night) whose family judges it.
 * Without it a run is ad-hoc. `history rebuild` reads it back.
 */
export const ORIGIN_FILE = 'history-origin.json';

export const runOriginSchema = z.object({ schedule: z.string().min(1), night: z.string().min(1) }).strict();
export type RunOrigin = z.infer<typeof runOriginSchema>;

/** The origin a results folder records (a scheduled run's sweep), or undefined (ad-hoc, or unreadable). */
export function readOrigin(resultsDir: string): RunOrigin | undefined {
  const json = readJson(join(resultsDir, ORIGIN_FILE));
  const r = json.ok ? runOriginSchema.safeParse(json.value) : undefined;
  return r?.success ? r.data : undefined;
}

/** The GPU of a plan's deployment: type and count, e.g. `h200x32`. */
export const gpuOf = (plan: Pick<SweepPlan, 'slurm' | 'topology'>): string =>
  `${plan.slurm.gpu.toLowerCase()}x${plan.topology.gpus}`;

function readJson(file: string): { ok: true; value: unknown } | { ok: false; why: string } {
  try {
    return { ok: true, value: JSON.parse(readFileSync(file, 'utf8')) };
  } catch (err) {
    return { ok: false, why: (err as Error).message };
  }
}

const issues = (e: { issues: { path: PropertyKey[]; message: string }[] }) =>
  e.issues
    .slice(0, 3)
    .map((i) => `${i.path.map(String).join('.') || '(root)'}: ${i.message}`)
    .join('; ');

/** Why a configured point has no record, when the sweep said (concurrency → its last error). */
export type PointFailures = Readonly<Record<number, string>>;

/**
 * The points of the run in `resultsDir`: each published point folder (`c<N>`) with a record, and
 * each point the plan configured that has none, as a failed point (`valid: false`, `failed: true`,
 * no metrics, the reason from `failures` or "no result.json"): a point that failed is in the
 * history, so its series sees it was not measured.
 */
export function extractRun(resultsDir: string, failures: PointFailures = {}): ExtractedRun {
  const layout = new ResultsLayout(resultsDir);
  const runIdFallback = resultsDir.replace(/\/+$/, '').split('/').pop() ?? resultsDir;
  const planJson = readJson(layout.planFile);
  if (!planJson.ok) return { runId: runIdFallback, points: [], skipped: [`${layout.planFile}: ${planJson.why}`] };
  const plan = sweepPlanSchema.safeParse(planJson.value);
  if (!plan.success)
    return { runId: runIdFallback, points: [], skipped: [`${layout.planFile}: ${issues(plan.error)}`] };
  const skipped: string[] = [];
  const records: PointResult[] = [];
  const dirs = existsSync(layout.pointsDir) ? readdirSync(layout.pointsDir).filter((f) => /^c\d+$/.test(f)) : [];
  for (const d of dirs) {
    const file = newestWindowRecord(layout, Number(d.slice(1)));
    if (!existsSync(file)) continue;
    const json = readJson(file);
    const rec = json.ok ? pointResultSchema.safeParse(json.value) : undefined;
    if (!json.ok) skipped.push(`${file}: ${json.why}`);
    else if (!rec?.success) skipped.push(`${file}: ${rec ? issues(rec.error) : 'unreadable'}`);
    else records.push(rec.data);
  }
  const runId = records[0]?.identity.sweepId ?? runIdFallback;
  // one time for the whole run (its first point's start; without any record, when its plan was written),
  // so that every series orders runs alike
  const time = records.map((r) => r.timing.started_at).sort()[0] ?? statSync(layout.planFile).mtime.toISOString();
  const p = plan.data;
  const context = (launchFingerprint: string) => ({
    cluster: p.cluster,
    image: p.image,
    engineVersion: p.engine.version,
    launchFingerprint,
    planHash: p.planHash,
  });
  const schedule = readOrigin(resultsDir)?.schedule;
  const origin = schedule === undefined ? {} : { schedule };
  // a failed point has no record: its client and workload are the run's (another point's record), else unknown
  const client = records[0]?.client.name ?? 'unknown';
  const workload = records[0] ? workloadOf(records[0].dataset) : 'unknown';
  const keyOf = (model: string, concurrency: number, r?: PointResult) => ({
    config: p.sweep,
    orientation: p.orientation,
    model,
    gpu: gpuOf(p),
    cluster: p.cluster,
    client: r?.client.name ?? client,
    workload: r ? workloadOf(r.dataset) : workload,
    concurrency,
  });
  const recorded = new Set(records.map((r) => r.conc));
  const failed = p.points
    .filter((c) => !recorded.has(c))
    .map((c) =>
      historyPointSchema.parse({
        runId,
        time,
        resultsDir,
        key: keyOf(p.model.servedName, c),
        ...origin,
        // no record, no fingerprint: the plan hash stands in (a launch change changes it too)
        context: context(p.planHash),
        valid: false,
        failed: true,
        invalidReasons: [failures[c] ?? `no ${layout.pointRecord(c)}: the point failed or did not run`],
        metrics: NO_METRICS,
      }),
    );
  const points = records.map((r) =>
    historyPointSchema.parse({
      runId,
      time,
      resultsDir,
      key: keyOf(r.identity.model, r.conc, r),
      ...origin,
      context: context(r.identity.engineArgsFingerprint),
      valid: r.submission_valid,
      invalidReasons: r.submission_invalid_reasons,
      metrics: headlineMetrics(r),
      requests: issuedRequests(r),
      ...replicateMeans(layout, p, r),
    }),
  );
  return { runId, points: [...points, ...failed].sort((a, b) => a.key.concurrency - b.key.concurrency), skipped };
}

/** The replicate metric a history metric's precision target is set on (libs/topology REPLICATE_METRICS). */
const TARGET_OF: Partial<Record<MetricName, ReplicateMetric>> = SUMMARY_FIELD;

/**
 * A replicated point (`replicates/c<N>/r<k>/result.json` beside its first pass): its metrics as the
 * means over the valid replicates of this run, with n and each mean's 95 % CI (the interval the sweep
 * published: libs/sweep replicateInterval); nothing when the point was measured once.
 */
function replicateMeans(
  layout: ResultsLayout,
  plan: SweepPlan,
  first: PointResult,
): { metrics?: HeadlineMetrics; n?: number; ci?: Partial<Record<MetricName, { lower: number; upper: number }>> } {
  const spec = plan.replicates;
  if (!spec || !first.submission_valid) return {};
  const runs = [first];
  for (let k = 2; k <= spec.max; k++) {
    const file = layout.replicateRecord(first.conc, k);
    if (!existsSync(file)) break;
    const json = readJson(file);
    const rec = json.ok ? pointResultSchema.safeParse(json.value) : undefined;
    if (!rec?.success || !rec.data.submission_valid || rec.data.identity.sweepId !== first.identity.sweepId) break;
    runs.push(rec.data);
  }
  if (runs.length < 2) return {};
  const each = runs.map(headlineMetrics);
  const metrics = { ...each[0]! };
  const ci: Partial<Record<MetricName, { lower: number; upper: number }>> = {};
  for (const m of Object.keys(metrics) as MetricName[]) {
    const v = each.map((x) => x[m]);
    if (v.some((x) => x === null)) continue;
    const target = TARGET_OF[m] === undefined ? undefined : spec.target[TARGET_OF[m]!];
    const iv = replicateInterval(v as number[], target, spec);
    metrics[m] = iv.mean;
    ci[m] = { lower: iv.lower, upper: iv.upper };
  }
  return { metrics, n: runs.length, ci };
}

/** Every results folder under `resultsRoot` (a folder holding a plan), one level deep, sorted. */
export function resultsFolders(resultsRoot: string): string[] {
  if (!existsSync(resultsRoot)) return [];
  return readdirSync(resultsRoot, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(resultsRoot, d.name, PLAN_FILE)))
    .map((d) => join(resultsRoot, d.name))
    .sort();
}
