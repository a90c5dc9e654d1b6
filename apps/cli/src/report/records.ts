/**
 * Reading a sweep's results folder (libs/core ResultsLayout: `plan.json`, `points/c<N>/result.json`,
 * `logs/…`) into the rows the `results` and `report` commands show. Point records are parsed by
 * their schema and projected by libs/agentx `pointSummary`, the projection the workflow shows too.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type {
  AllocationRecord,
  AttemptRecord,
  GpuLedger,
  PointState,
  PointStatus,
  SweepProgress,
} from '@infersweep/sweep';
import { PROGRESS_SNAPSHOT_FILE, ResultsLayout } from '@infersweep/core';
import { pointResultSchema, pointSummary, type PointResult } from '@infersweep/agentx';
import { readPlanFile } from './plan-file';
import { searchViewOf, type SearchView } from './search-marks';
import { replicateRowsOf, type ReplicateRow } from './replicates';

/** One ConcurrencyPoint as the report shows it. Latencies in ms, throughputs in tokens/s. */
export interface PointRow {
  concurrency: number;
  status: PointStatus;
  /** true/false from the record's validity gate; undefined when the point has no record */
  valid: boolean | undefined;
  reasons: string[];
  attempts: number;
  /** total (input + output) tokens/s per GPU — InferenceX `tput_per_gpu` */
  totalThroughputPerGpu: number | null;
  /** output tokens/s per GPU */
  outputThroughputPerGpu: number | null;
  /** tok/s/user at p50 (1/ITL) */
  interactivityP50: number | null;
  /** InferenceX's AgentX axis: 1 / p90(E2EL/OSL), tok/s/user */
  e2eNormInteractivityP90: number | null;
  /** good / profiled requests (search.slo.goodput), with its Wilson interval; null without goodput bounds */
  goodputAttainment: number | null;
  goodputCiLower: number | null;
  goodputCiUpper: number | null;
  ttftP50Ms: number | null;
  ttftP99Ms: number | null;
  itlP50Ms: number | null;
  e2elP50Ms: number | null;
  e2elP99Ms: number | null;
  requestsProfiled: number | null;
  requestsFailed: number | null;
  gpuCount: number | null;
  jobId: string | null;
  nodes: string[];
  resultPath: string | null;
  requestsJsonl: string | null;
  lastError: string | null;
  /**
   * Requests served per DP engine (`engine` label): from the server's counters over the profile, or —
   * when the point ended before profiling (an idle rank) — during its warmup. null: the server exposes
   * no engine label (the simulator).
   */
  engineRequests: { phase: 'profiling' | 'warmup'; perEngine: Record<string, number | null> } | null;
  /** Server prefix-cache hit rate over the window (hits / queries, tokens) and peak KV-cache usage, %. */
  prefixCacheHitRate: number | null;
  kvUsagePeakPct: number | null;
  /** Speculative decoding: mean acceptance length over the window (vLLM's spec-decode counters); null without. */
  specAcceptanceLength: number | null;
  /**
   * GPU energy over the window (the record's `energy`): J per total token and total tokens/s per MW when power
   * is valid, $/M tokens at the worker's GPU-hour price; null when the point has no telemetry.
   */
  energy: {
    powerValid: boolean;
    joulesPerToken: number | null;
    tokensPerSecondPerMw: number | null;
    dollarsPerMillionTokens: number | null;
  } | null;
  /** the point's failed attempts, classified, with what the sweep did (SweepProgress points) */
  failures?: AttemptRecord[];
}

export interface SweepResults {
  sweepId: string;
  resultsDir: string;
  orientation: string;
  cluster: string;
  model: string;
  configName: string;
  image: string | null;
  topology: string | null;
  gpus: number | null;
  planHash: string | null;
  points: PointRow[];
  allocations: AllocationRecord[];
  phase: string | null;
  /** log files under logs/, relative to resultsDir */
  logs: string[];
  /** where the point statuses and allocation history came from */
  source: 'temporal' | 'snapshot' | 'files';
  /** the adaptive search (limit, knee, added points), when the sweep searched */
  search?: SearchView | null;
  /** replicates across allocations (the config's replicates block): per point its mean, CI, n and share */
  replicates?: ReplicateRow[] | null;
  /** where the GPU time the allocations held went (libs/sweep/src/ledger.ts) */
  ledger?: GpuLedger | null;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

const orNull = <T>(x: T | undefined): T | null => (x === undefined ? null : x);

/** Per-engine request counts of a record: the profile's server counters, else the warmup idle-rank check's. */
export function engineRequestsOf(
  r: Pick<PointResult, 'server_metrics' | 'idle_rank_checks'>,
): PointRow['engineRequests'] {
  const window = r.server_metrics.per_engine;
  if (Object.keys(window).length > 0)
    return {
      phase: 'profiling',
      perEngine: Object.fromEntries(Object.entries(window).map(([e, v]) => [e, v.requests])),
    };
  const post = r.idle_rank_checks.find((c) => c.phase === 'post-warmup' && c.applicable);
  if (post && Object.keys(post.perEngine).length > 0) return { phase: 'warmup', perEngine: { ...post.perEngine } };
  return null;
}

/**
 * What the report needs from one point record: the record is parsed by its schema (libs/agentx
 * pointResultSchema) and projected by the one `pointSummary`. A record that does not validate is
 * shown as an invalid point with the reason, never as numbers guessed from a partial record.
 */
export function rowFromRecord(record: unknown, resultPath: string | null): PointRow {
  const parsed = pointResultSchema.safeParse(record);
  if (!parsed.success) {
    const conc = isObj(record) ? record.conc : undefined;
    const why = parsed.error.issues
      .slice(0, 3)
      .map((i) => `${i.path.join('.') || '(record)'}: ${i.message}`)
      .join('; ');
    return {
      ...emptyRow({ concurrency: typeof conc === 'number' ? conc : 0, status: 'invalid', attempts: 1 }),
      valid: false,
      reasons: [`the record${resultPath ? ` ${resultPath}` : ''} does not validate: ${why}`],
    };
  }
  const s = pointSummary(parsed.data, { resultPath: resultPath ?? '', reused: false });
  return {
    concurrency: s.concurrency,
    status: s.valid ? 'done' : 'invalid',
    valid: s.valid,
    reasons: s.reasons,
    attempts: s.attempt ?? 1,
    totalThroughputPerGpu: orNull(s.totalThroughputPerGpu),
    outputThroughputPerGpu: orNull(s.outputThroughputPerGpu),
    interactivityP50: orNull(s.interactivityP50),
    e2eNormInteractivityP90: orNull(s.e2eNormInteractivityP90),
    goodputAttainment: orNull(s.goodput?.attainment),
    goodputCiLower: orNull(s.goodput?.lower),
    goodputCiUpper: orNull(s.goodput?.upper),
    ttftP50Ms: orNull(s.ttftP50Ms),
    ttftP99Ms: orNull(s.ttftP99Ms),
    itlP50Ms: orNull(s.itlP50Ms),
    e2elP50Ms: orNull(s.e2elP50Ms),
    e2elP99Ms: orNull(s.e2elP99Ms),
    requestsProfiled: orNull(s.requestsProfiled),
    requestsFailed: orNull(s.requestsFailed),
    gpuCount: orNull(s.gpuCount),
    jobId: orNull(s.jobId),
    nodes: s.nodes ?? [],
    resultPath,
    requestsJsonl: orNull(s.requestsJsonl),
    lastError: null,
    engineRequests: engineRequestsOf(parsed.data),
    prefixCacheHitRate: parsed.data.server_metrics.cache.overall_cache_hit_rate,
    kvUsagePeakPct: parsed.data.server_metrics.kv_cache.gpu_usage_pct,
    specAcceptanceLength: parsed.data.server_metrics.spec_decode?.acceptance_length ?? null,
    energy: energyOf(parsed.data.energy),
  };
}

/** The row's energy figures from the record's energy block (null without one). */
function energyOf(e: PointResult['energy']): PointRow['energy'] {
  if (e === undefined) return null;
  return {
    powerValid: e.power_valid,
    joulesPerToken: e.metrics?.joules_per_total_token ?? null,
    tokensPerSecondPerMw: e.metrics?.tokens_per_second_per_mw ?? null,
    dollarsPerMillionTokens: e.dollars_per_million_tokens,
  };
}

function emptyRow(pt: PointState): PointRow {
  return {
    concurrency: pt.concurrency,
    status: pt.status,
    valid: undefined,
    reasons: [],
    attempts: pt.attempts,
    totalThroughputPerGpu: pt.summary?.totalThroughputPerGpu ?? null,
    outputThroughputPerGpu: pt.summary?.outputThroughputPerGpu ?? null,
    interactivityP50: pt.summary?.interactivityP50 ?? null,
    e2eNormInteractivityP90: pt.summary?.e2eNormInteractivityP90 ?? null,
    goodputAttainment: pt.summary?.goodput?.attainment ?? null,
    goodputCiLower: pt.summary?.goodput?.lower ?? null,
    goodputCiUpper: pt.summary?.goodput?.upper ?? null,
    ttftP50Ms: pt.summary?.ttftP50Ms ?? null,
    ttftP99Ms: null,
    itlP50Ms: null,
    e2elP50Ms: pt.summary?.e2elP50Ms ?? null,
    e2elP99Ms: null,
    requestsProfiled: pt.summary?.requestsProfiled ?? null,
    requestsFailed: null,
    gpuCount: null,
    jobId: pt.jobId ?? pt.summary?.jobId ?? null,
    nodes: [],
    resultPath: pt.resultPath ?? null,
    requestsJsonl: null,
    lastError: pt.lastError ?? null,
    engineRequests: null,
    prefixCacheHitRate: null,
    kvUsagePeakPct: null,
    specAcceptanceLength: null,
    energy: null,
  };
}

/**
 * Merge the workflow's view of a point (status, attempts, error) with its record on disk (the
 * numbers). A point the workflow has not settled keeps the workflow's status even if a stale
 * record exists.
 */
export function mergePoint(pt: PointState | undefined, rec: PointRow | undefined): PointRow {
  if (pt === undefined && rec !== undefined) return rec;
  if (pt === undefined) throw new Error('mergePoint: neither a point state nor a record');
  const row = mergeState(pt, rec);
  // every failed attempt, classified (libs/core/src/attempt-class.ts)
  return pt.failures?.length ? { ...row, failures: pt.failures } : row;
}

function mergeState(pt: PointState, rec: PointRow | undefined): PointRow {
  const base = emptyRow(pt);
  if (rec === undefined || (pt.status !== 'done' && pt.status !== 'invalid')) {
    if (pt.summary) {
      base.valid = pt.summary.valid;
      base.reasons = pt.summary.reasons;
    }
    return base;
  }
  return {
    ...rec,
    status: pt.status,
    attempts: pt.attempts || rec.attempts,
    valid: rec.valid ?? pt.summary?.valid,
    reasons: rec.reasons.length ? rec.reasons : (pt.summary?.reasons ?? []),
    jobId: rec.jobId ?? base.jobId,
    lastError: pt.lastError ?? null,
    resultPath: rec.resultPath ?? base.resultPath,
  };
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

/** Every point record of a results folder (`points/c<N>/result.json`, libs/core ResultsLayout), by concurrency. */
export function readPointRecords(resultsDir: string): Map<number, PointRow> {
  const out = new Map<number, PointRow>();
  const layout = new ResultsLayout(resultsDir);
  if (!existsSync(layout.pointsDir)) return out;
  for (const f of readdirSync(layout.pointsDir)) {
    // published folders only: `c<N>.partial-<id>` and `c<N>.superseded-<time>` (libs/agentx/src/io.ts) are not results
    const m = /^c(\d+)$/.exec(f);
    if (!m) continue;
    const c = Number(m[1]);
    const file = layout.pointRecord(c);
    if (!existsSync(file)) continue;
    const rec = readJson(file);
    if (rec === undefined) continue;
    const row = rowFromRecord(rec, file);
    if (row.concurrency === 0) row.concurrency = c;
    if (row.requestsJsonl === null && existsSync(layout.pointRequests(c))) row.requestsJsonl = layout.pointRequests(c);
    out.set(row.concurrency, row);
  }
  return out;
}

/**
 * A copy a dead attempt left, not a result: `<point>.partial-<id>` (libs/agentx/src/point.ts) or
 * `<node>.log.partial-<id>` (libs/slurm/src/cluster.ts copyLogs, a worker killed mid-copy).
 */
const isPartial = (name: string) => name.includes('.partial-');

/** Log files under `<resultsDir>/logs`, relative to resultsDir, sorted; partial copies left out. */
export function listLogs(resultsDir: string): string[] {
  const root = join(resultsDir, 'logs');
  const out: string[] = [];
  const walk = (rel: string) => {
    const abs = join(root, rel);
    let entries: string[];
    try {
      entries = readdirSync(abs);
    } catch {
      return;
    }
    for (const e of entries.filter((n) => !isPartial(n)).sort()) {
      const r = rel ? `${rel}/${e}` : e;
      if (statSync(join(root, r)).isDirectory()) walk(r);
      else out.push(`logs/${r}`);
    }
  };
  walk('');
  return out;
}

export const PROGRESS_SNAPSHOT = PROGRESS_SNAPSHOT_FILE;

/**
 * A sweep's results: the folder's plan and records merged with the workflow's progress (given,
 * or the `progress.json` snapshot an earlier `report`/`results` left, or the files alone).
 */
export function loadSweepResults(resultsDir: string, progress?: SweepProgress, sweepIdHint?: string): SweepResults {
  const { plan } = readPlanFile(resultsDir);
  let source: SweepResults['source'] = 'temporal';
  let prog = progress;
  if (prog === undefined) {
    const snap = readJson(join(resultsDir, PROGRESS_SNAPSHOT));
    if (isObj(snap) && Array.isArray(snap.points)) {
      prog = snap as unknown as SweepProgress;
      source = 'snapshot';
    } else source = 'files';
  }
  const records = readPointRecords(resultsDir);
  for (const pt of prog?.points ?? []) {
    // a record the workflow points at (another layout, or a folder moved since)
    if (records.has(pt.concurrency) || !pt.resultPath || !existsSync(pt.resultPath)) continue;
    const rec = readJson(pt.resultPath);
    if (rec !== undefined) records.set(pt.concurrency, rowFromRecord(rec, pt.resultPath));
  }
  let points: PointRow[];
  if (prog) {
    const rows = prog.points.map((pt) => mergePoint(pt, records.get(pt.concurrency)));
    points = rows;
  } else {
    const conc = new Set<number>([...(plan?.points ?? []), ...records.keys()]);
    points = [...conc]
      .sort((a, b) => a - b)
      .map((c) => records.get(c) ?? mergePoint({ concurrency: c, status: 'pending', attempts: 0 }, undefined));
  }
  const t = plan?.topology;
  const topo = t ? `TP${t.tp} PP${t.pp} DP${t.dp} EP${t.ep} · ${t.nodes} node(s) × ${t.gpusPerNode} GPUs` : null;
  const dirName = resultsDir.replace(/\/+$/, '').split('/').pop() ?? resultsDir;
  return {
    sweepId: prog?.sweepId ?? sweepIdHint ?? dirName,
    resultsDir,
    orientation: prog?.orientation ?? plan?.orientation ?? '?',
    cluster: prog?.cluster ?? plan?.cluster ?? '?',
    model: prog?.model ?? plan?.model.servedName ?? '?',
    configName: prog?.configName ?? plan?.sweep ?? '?',
    image: plan?.image ?? null,
    topology: topo,
    gpus: plan?.topology.gpus ?? null,
    planHash: prog?.planHash ?? plan?.planHash ?? null,
    points,
    allocations: prog?.allocations ?? [],
    phase: prog?.phase ?? null,
    logs: listLogs(resultsDir),
    source,
    search: searchViewOf(prog),
    ...replicatesOf(prog),
    ledger: prog?.ledger ?? null,
  };
}

const replicatesOf = (prog: SweepProgress | undefined): { replicates?: ReplicateRow[] } => {
  const rows = replicateRowsOf(prog);
  return rows ? { replicates: rows } : {};
};
