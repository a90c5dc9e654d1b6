/**
 * Reading a sweep's results folder (`<resultsDir>/plan.json`, `points/c<N>.json`, `logs/…`) into
 * the rows the `results` and `report` commands show. The point record is libs/agentx's result
 * JSON (InferenceX-shaped field names); the reader is tolerant: it picks each value from the
 * first path that holds a number, so a record written by an older or newer writer still shows.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { AllocationRecord, PointState, PointStatus, SweepProgress } from '@infersweep/sweep';

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
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The value at a dotted path, or undefined. */
export function at(o: unknown, path: string): unknown {
  let cur: unknown = o;
  for (const k of path.split('.')) {
    if (!isObj(cur)) return undefined;
    cur = cur[k];
  }
  return cur;
}

function num(o: unknown, ...paths: string[]): number | null {
  for (const p of paths) {
    const v = at(o, p);
    if (typeof v === 'number' && Number.isFinite(v)) return v;
  }
  return null;
}

function str(o: unknown, ...paths: string[]): string | null {
  for (const p of paths) {
    const v = at(o, p);
    if (typeof v === 'string' && v !== '') return v;
  }
  return null;
}

const secToMs = (s: number | null): number | null => (s === null ? null : s * 1000);

/** What the report needs from one point record (libs/agentx pointResultSchema, tolerant). */
export function rowFromRecord(record: unknown, resultPath: string | null): PointRow {
  const validRaw = at(record, 'submission_valid') ?? at(record, 'validity.valid');
  const reasonsRaw = at(record, 'submission_invalid_reasons') ?? at(record, 'validity.reasons');
  const valid = typeof validRaw === 'boolean' ? validRaw : undefined;
  const nodes = at(record, 'identity.nodes');
  const lat = 'request_metrics.latency';
  return {
    concurrency: num(record, 'conc', 'concurrency') ?? 0,
    status: valid === false ? 'invalid' : 'done',
    valid,
    reasons: Array.isArray(reasonsRaw) ? reasonsRaw.map(String) : [],
    attempts: num(record, 'identity.attempt') ?? 1,
    totalThroughputPerGpu: num(record, 'request_metrics.throughput.per_gpu.total_tput_tps', 'throughput.totalPerGpu'),
    outputThroughputPerGpu: num(record, 'request_metrics.throughput.per_gpu.output_tput_tps', 'throughput.outputPerGpu'),
    interactivityP50: num(record, `${lat}.intvty.p50`, 'interactivity.p50'),
    ttftP50Ms: secToMs(num(record, `${lat}.ttft.p50`, 'ttft.p50')),
    ttftP99Ms: secToMs(num(record, `${lat}.ttft.p99`, 'ttft.p99')),
    itlP50Ms: secToMs(num(record, `${lat}.itl.p50`, 'itl.p50')),
    e2elP50Ms: secToMs(num(record, `${lat}.e2el.p50`, 'e2el.p50')),
    e2elP99Ms: secToMs(num(record, `${lat}.e2el.p99`, 'e2el.p99')),
    requestsProfiled: num(record, 'request_accounting.records_profiled', 'accounting.profiled'),
    requestsFailed: num(record, 'request_accounting.records_error_dropped', 'accounting.errors'),
    gpuCount: num(record, 'gpu_count'),
    jobId: str(record, 'identity.jobId'),
    nodes: Array.isArray(nodes) ? nodes.map(String) : [],
    resultPath,
    requestsJsonl: str(record, 'artifacts.requests_jsonl'),
    lastError: null,
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

/** Every `points/c<N>.json` record of a results folder, by concurrency. */
export function readPointRecords(resultsDir: string): Map<number, PointRow> {
  const out = new Map<number, PointRow>();
  const dir = join(resultsDir, 'points');
  if (!existsSync(dir)) return out;
  for (const f of readdirSync(dir)) {
    // points/c<N>.json, or a folder per point: points/c<N>/result.json (+ requests.jsonl)
    const m = /^c(\d+)(\.json)?$/.exec(f);
    if (!m) continue;
    const file = m[2] ? join(dir, f) : join(dir, f, 'result.json');
    if (!existsSync(file)) continue;
    const rec = readJson(file);
    if (rec === undefined) continue;
    const row = rowFromRecord(rec, file);
    if (row.concurrency === 0) row.concurrency = Number(m[1]);
    if (row.requestsJsonl === null) {
      const jsonl = [`c${m[1]}.requests.jsonl`, `c${m[1]}.jsonl`, `c${m[1]}/requests.jsonl`].map((n) => join(dir, n)).find((p) => existsSync(p));
      if (jsonl) row.requestsJsonl = jsonl;
    }
    out.set(row.concurrency, row);
  }
  return out;
}

/** Log files under `<resultsDir>/logs`, relative to resultsDir, sorted. */
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
    for (const e of entries.sort()) {
      const r = rel ? `${rel}/${e}` : e;
      if (statSync(join(root, r)).isDirectory()) walk(r);
      else out.push(`logs/${r}`);
    }
  };
  walk('');
  return out;
}

export const PROGRESS_SNAPSHOT = 'progress.json';

/**
 * A sweep's results: the folder's plan and records merged with the workflow's progress (given,
 * or the `progress.json` snapshot an earlier `report`/`results` left, or the files alone).
 */
export function loadSweepResults(resultsDir: string, progress?: SweepProgress, sweepIdHint?: string): SweepResults {
  const plan = readJson(join(resultsDir, 'plan.json'));
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
    const planned = at(plan, 'points');
    const conc = new Set<number>([...(Array.isArray(planned) ? planned.filter((x): x is number => typeof x === 'number') : []), ...records.keys()]);
    points = [...conc].sort((a, b) => a - b).map((c) => records.get(c) ?? mergePoint({ concurrency: c, status: 'pending', attempts: 0 }, undefined));
  }
  const t = at(plan, 'topology');
  const topo = isObj(t) ? `TP${String(t.tp)} PP${String(t.pp)} DP${String(t.dp)} EP${String(t.ep)} · ${String(t.nodes)} node(s) × ${String(t.gpusPerNode)} GPUs` : null;
  const dirName = resultsDir.replace(/\/+$/, '').split('/').pop() ?? resultsDir;
  return {
    sweepId: prog?.sweepId ?? sweepIdHint ?? dirName,
    resultsDir,
    orientation: prog?.orientation ?? str(plan, 'orientation') ?? '?',
    cluster: prog?.cluster ?? str(plan, 'cluster') ?? '?',
    model: prog?.model ?? str(plan, 'model.servedName', 'model.name') ?? '?',
    configName: prog?.configName ?? str(plan, 'sweep') ?? '?',
    image: str(plan, 'image'),
    topology: topo,
    gpus: num(plan, 'topology.gpus'),
    planHash: prog?.planHash ?? str(plan, 'planHash'),
    points,
    allocations: prog?.allocations ?? [],
    phase: prog?.phase ?? null,
    logs: listLogs(resultsDir),
    source,
  };
}
