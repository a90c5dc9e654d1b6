import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { agentxSettingsSchema, defaultPublicDataset } from '@infersweep/topology';
import { POINT_RECORD_FILE, POINT_REQUESTS_FILE, tail } from '@infersweep/core';
import { loadTraces } from '../trace/loader';
import { AiperfError, PointAbortedError } from '../errors';
import { writeFileAtomic, writeJsonlAtomic } from '../io';
import { accounting, metricCoverage, requestMetrics } from '../metrics/aggregate';
import { prefixCacheGate, validity } from '../metrics/validity';
import { identitySchema, pointResultSchema, type PointResult } from '../result';
import { recordHeader, snapshot, type RunPointInput } from '../point';
import { checkIdleRanks } from '../server/idle-ranks';
import { serverMetricsWindow } from '../server/window';
import { AIPERF_ENV, buildAiperfArgv } from './argv';
import { shellJoin } from '@infersweep/core';
import { aiperfAggregateSchema, aiperfToRecords, parseAiperfJsonl, type AiperfAggregate } from './parse';
import { serverMetricsFromAiperf } from './server-metrics';

export interface RunAiperfInput extends Omit<RunPointInput, 'outDir'> {
  /** Required: the argv, logs and aiperf artifacts live here. */
  outDir: string;
  /** Local Weka traces (file/dir) instead of the pinned public loader (offline runs). */
  traceFile?: string;
  /** Extra environment for the aiperf process. */
  env?: Record<string, string>;
}

export interface AiperfProcessStats {
  exitCode: number | null;
  wallSeconds: number;
  /** CPU seconds of aiperf and all its (waited-for) subprocesses, from the shell's `times`. */
  childCpuSeconds: number | null;
}

/** Parse bash `times` output (second line = children user/sys). */
export function parseTimes(text: string): number | null {
  const lines = text.trim().split('\n').slice(-2);
  const m = /(\d+)m([\d.]+)s\s+(\d+)m([\d.]+)s/.exec(lines[1] ?? '');
  if (!m) return null;
  return Number(m[1]) * 60 + Number(m[2]) + Number(m[3]) * 60 + Number(m[4]);
}

/**
 * Run one point with the pinned aiperf (here: PyPI aiperf in its own venv; on a cluster the same argv
 * runs in an srun step on the head node) and parse its exports into the same PointResult shape.
 * The argv is persisted verbatim (benchmark_command.txt) before execution.
 */
// eslint-disable-next-line max-lines-per-function -- 150 lines, over the 80-line budget until it is split (docs/conventions.md)
export async function runAiperfPoint(
  input: RunAiperfInput,
  hooks: { signal?: AbortSignal; onLog?(line: string): void } = {},
): Promise<PointResult & { aiperf: AiperfProcessStats }> {
  const settings = agentxSettingsSchema.parse(input.settings);
  const identity = identitySchema.parse(input.identity);
  const family = input.family ?? 'vllm';
  mkdirSync(input.outDir, { recursive: true });
  const artifactDir = join(input.outDir, 'aiperf_artifacts');
  const entries = input.traceFile ? countTraces(input.traceFile) : settings.aiperf.numDatasetEntries;
  // the planner fills publicDataset by InferenceX's model-prefix rule; a bare call falls back to the _256k corpus
  const loader = settings.aiperf.publicDataset ?? defaultPublicDataset(undefined);
  const argv = buildAiperfArgv({
    urls: input.endpoints,
    servedModel: input.servedModel,
    tokenizer: settings.aiperf.tokenizer ?? identity.model,
    concurrency: input.concurrency,
    settings,
    metricsEndpoints: input.metricsEndpoints.map((e) => (new URL(e).pathname === '/' ? `${e.replace(/\/$/, '')}/metrics` : e)),
    artifactDir,
    dataset: input.traceFile ? { kind: 'file', path: input.traceFile, entries } : { kind: 'public', loader, entries },
  });
  const commandPath = join(input.outDir, 'benchmark_command.txt');
  writeFileAtomic(commandPath, `${shellJoin([settings.aiperf.binary, ...argv])}\n`);
  const startedAt = new Date();
  const startSnap = await snapshot(input.metricsEndpoints, settings.drain.scrapeTimeoutSeconds);

  const log = createWriteStream(join(input.outDir, 'benchmark.log'));
  let logTail = '';
  const t0 = performance.now();
  const proc = spawn('bash', ['-c', '"$@"; rc=$?; times >&2; exit $rc', 'aiperf-wrapper', settings.aiperf.binary, ...argv], {
    env: { ...process.env, ...AIPERF_ENV, ...input.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const onData = (d: Buffer): void => {
    log.write(d);
    logTail = (logTail + d.toString()).slice(-20_000);
    hooks.onLog?.(d.toString());
  };
  proc.stdout.on('data', onData);
  proc.stderr.on('data', onData);
  const killGroup = (sig: NodeJS.Signals): void => {
    try {
      if (proc.pid) process.kill(-proc.pid, sig);
    } catch {
      /* already gone */
    }
  };
  let aborted = false;
  const onAbort = (): void => {
    aborted = true;
    killGroup('SIGINT');
    setTimeout(() => killGroup('SIGKILL'), 10_000).unref();
  };
  hooks.signal?.addEventListener('abort', onAbort, { once: true });
  const hardTimeout = setTimeout(
    () => killGroup('SIGKILL'),
    (settings.profileDurationSeconds + settings.aiperf.processTimeoutSeconds) * 1000,
  );
  const exitCode = await new Promise<number | null>((resolve) => proc.on('close', (code) => resolve(code)));
  clearTimeout(hardTimeout);
  hooks.signal?.removeEventListener('abort', onAbort);
  await new Promise<void>((r) => log.end(r));
  const stats: AiperfProcessStats = { exitCode, wallSeconds: (performance.now() - t0) / 1000, childCpuSeconds: parseTimes(logTail) };
  if (aborted) throw new PointAbortedError('aiperf point aborted by caller', { logTail: tail(logTail) });
  const endSnap = await snapshot(input.metricsEndpoints, settings.drain.scrapeTimeoutSeconds);

  const aggPath = join(artifactDir, 'profile_export_aiperf.json');
  const jsonlPath = join(artifactDir, 'profile_export.jsonl');
  if (!existsSync(aggPath) || !existsSync(jsonlPath))
    throw new AiperfError(`aiperf exited ${exitCode} without exports (${aggPath})`, exitCode !== 0 ? 'transient' : 'fatal', {
      logTail: tail(logTail, 40),
    });
  const agg = aiperfAggregateSchema.parse(JSON.parse(readFileSync(aggPath, 'utf8')));
  const records = aiperfToRecords(parseAiperfJsonl(readFileSync(jsonlPath, 'utf8')), input.endpoints[0]!);
  const acc = accounting(records);
  const metrics = requestMetrics(records, input.gpuCount);
  const tch = agg.theoretical_prefix_cache_hit?.avg;
  metrics.cache.theoretical_cache_hit_rate = tch === null || tch === undefined ? null : tch / 100;
  const profiled = records.filter((r) => r.phase === 'profiling');
  const profStart = profiled.length ? Math.min(...profiled.map((r) => r.start_ms)) : null;
  const window = serverMetricsWindow(startSnap, endSnap, [], family);
  // aiperf's own per-phase server metrics (what InferenceX aggregates); the snapshots only as a fallback
  const smPath = join(artifactDir, 'server_metrics_export.json');
  const fromAiperf = existsSync(smPath)
    ? serverMetricsFromAiperf(JSON.parse(readFileSync(smPath, 'utf8')), family, window.kv_cache.gpu_total_tokens ?? null)
    : null;
  const server = fromAiperf ?? window;
  if (fromAiperf === null)
    server.warnings.push(
      'aiperf adapter: no server_metrics_export.json; server counter deltas span the whole aiperf run (warmup included)',
    );
  const serverMissing: string[] = [];
  if (input.metricsEndpoints.length === 0) serverMissing.push('no metrics endpoints given');
  else if (server.tokens.generation === null) serverMissing.push('generation-token counter delta unavailable');
  const v = validity({
    settings,
    accounting: acc,
    successes: profiled.filter((r) => r.ok).length,
    coverage: profStart === null ? 0 : metricCoverage(records, profStart, settings.profileDurationSeconds),
    clientSaturatedReason: null,
    concurrencyHeld: null,
    runCancelledReason: exitCode === 0 ? null : `aiperf exited ${exitCode}`,
    serverMetricsMissing: serverMissing,
    idleRankMessages: [],
    prefixCacheReason: prefixCacheGate(records, server.cache.prefix_hits, settings.requireCachedTokens ?? false),
  });
  const reasons = [...(agg.metadata?.submission_invalid_reasons ?? []).map((r) => `aiperf:${r}`), ...v.reasons];
  const valid = v.valid && (agg.metadata?.submission_valid ?? true);
  const lastEnd = profiled.reduce((mx, r) => Math.max(mx, r.end_ms), -Infinity);
  const recordPath = join(input.outDir, POINT_RECORD_FILE);
  const reqPath = join(input.outDir, POINT_REQUESTS_FILE);
  const result = pointResultSchema.parse({
    ...recordHeader(input, { name: 'aiperf', version: agg.aiperf_version ?? 'unknown' }, identity, settings),
    dataset: {
      ...(input.traceFile
        ? { source_type: 'file', loader: 'weka_trace', path: input.traceFile, seed: null, entry_count: entries }
        : { source_type: 'public', loader, path: null, seed: null, entry_count: entries }),
      ...aiperfDatasetMetadata(agg),
    },
    num_requests_total: acc.records_total,
    num_requests_successful: profiled.filter((r) => r.ok).length,
    request_accounting: acc,
    request_metrics: metrics,
    concurrency: {
      target_sessions: input.concurrency,
      time_weighted_sessions: null,
      time_weighted_busy_lanes: null,
      time_weighted_requests_in_flight: agg.effective_concurrency?.avg ?? null,
      max_requests_in_flight: Math.round(agg.effective_concurrency?.max ?? 0),
      subagent_requests_profiled: profiled.filter((r) => r.kind === 'subagent').length,
      plays_started: 0,
    },
    client_health: {
      event_loop_delay_p99_ms: null,
      event_loop_delay_max_ms: null,
      cpu_fraction: stats.childCpuSeconds !== null && stats.wallSeconds > 0 ? stats.childCpuSeconds / stats.wallSeconds : null,
      peak_rss_bytes: null,
      saturated: false,
      reason: null,
    },
    server_metrics: server,
    idle_rank_checks: [checkIdleRanks([], null, 'post-warmup', family)].map((c) =>
      input.expectedEngines ? { ...c, message: 'not checked by the aiperf adapter (run checkIdleRanks on the deployment)' } : c,
    ),
    timing: {
      started_at: startedAt.toISOString(),
      profiling_started_at: agg.start_time ?? null,
      profiling_ended_at: agg.end_time ?? null,
      ended_at: new Date().toISOString(),
      profile_duration_seconds: settings.profileDurationSeconds,
      measured_profile_seconds: profStart !== null && Number.isFinite(lastEnd) ? (lastEnd - profStart) / 1000 : null,
      warmup_seconds: null,
    },
    submission_valid: valid,
    submission_invalid_reasons: reasons,
    artifacts: { record: recordPath, requests_jsonl: reqPath, command: commandPath, raw_dir: artifactDir },
  });
  writeJsonlAtomic(reqPath, records);
  writeFileAtomic(recordPath, JSON.stringify(result, null, 2) + '\n');
  return { ...result, aiperf: stats };
}

/** aiperf's own `metadata.dataset` (what InferenceX copies into its aggregate), when it wrote one. */
function aiperfDatasetMetadata(agg: AiperfAggregate): { aiperf_metadata?: Record<string, unknown> } {
  const d = (agg.metadata as Record<string, unknown> | undefined)?.dataset;
  return d !== null && typeof d === 'object' && !Array.isArray(d) ? { aiperf_metadata: { ...(d as Record<string, unknown>) } } : {};
}

function countTraces(path: string): number {
  // aiperf treats --num-dataset-entries as a ceiling; our loader gives the exact count
  return loadTraces(path).length;
}
