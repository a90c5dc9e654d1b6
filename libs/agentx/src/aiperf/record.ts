/** A finished aiperf run's exports (in the point folder) → the same PointResult record infersweep's client writes. */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { POINT_RECORD_FILE, POINT_REQUESTS_FILE, tail } from '@infersweep/core';
import type { AgentxSettings } from '@infersweep/topology';
import { collapsedStreams } from '../client-health';
import { AiperfError } from '../errors';
import { writeFileAtomic, writeJsonlAtomic } from '../io';
import { accounting, metricCoverage, requestGoodput, requestMetrics, sloUncertainty } from '../metrics/aggregate';
import { outputTokensOf, prefixCacheGate, validity } from '../metrics/validity';
import { pointResultSchema, type PointIdentity, type PointResult, type RequestRecord } from '../result';
import { recordHeader, windowEnergy, type RunPointInput } from '../point';
import type { DcgmSampler } from '../server/dcgm-sampler';
import type { EndpointSnapshot } from '../server/window';
import { checkIdleRanks, checkRoles } from '../server/idle-ranks';
import { serverMetricsWindow } from '../server/window';
import {
  aiperfAggregateSchema,
  aiperfOriginNs,
  aiperfToRecords,
  parseAiperfJsonl,
  type AiperfAggregate,
} from './parse';
import type { AiperfRunOutcome } from './runner';
import { serverMetricsFromAiperf } from './server-metrics';

/** What the run was asked to do, as the record needs it. */
export interface AiperfRunContext {
  input: Omit<RunPointInput, 'outDir'> & { outDir: string; traceFile?: string };
  settings: AgentxSettings;
  identity: PointIdentity;
  /** The local aiperf_artifacts folder of the point. */
  artifactDir: string;
  commandPath: string;
  loader: string;
  entries: number;
  startedAt: Date;
}

/** aiperf's aggregate and per-request exports; a missing one is an AiperfError (transient when aiperf failed). */
function readExports(
  artifactDir: string,
  out: AiperfRunOutcome,
  endpoint: string,
): { agg: AiperfAggregate; records: RequestRecord[]; originWallMs: number } {
  const aggPath = join(artifactDir, 'profile_export_aiperf.json');
  const jsonlPath = join(artifactDir, 'profile_export.jsonl');
  if (!existsSync(aggPath) || !existsSync(jsonlPath))
    throw new AiperfError(
      `aiperf exited ${out.exitCode} without exports (${aggPath})`,
      out.exitCode !== 0 ? 'transient' : 'fatal',
      {
        logTail: tail(out.logTail, 40),
      },
    );
  const agg = aiperfAggregateSchema.parse(JSON.parse(readFileSync(aggPath, 'utf8')));
  const rows = parseAiperfJsonl(readFileSync(jsonlPath, 'utf8'));
  // the records' clock: ms from the first request's start (./parse.ts aiperfOriginNs, epoch ns)
  return { agg, records: aiperfToRecords(rows, endpoint), originWallMs: aiperfOriginNs(rows) / 1e6 };
}

/** aiperf's own per-phase server metrics (what InferenceX aggregates); the snapshots only as a fallback. */
function serverMetrics(c: AiperfRunContext, start: EndpointSnapshot[], end: EndpointSnapshot[]) {
  const family = c.input.family ?? 'vllm';
  const window = serverMetricsWindow(start, end, [], family);
  const smPath = join(c.artifactDir, 'server_metrics_export.json');
  const fromAiperf = existsSync(smPath)
    ? serverMetricsFromAiperf(
        JSON.parse(readFileSync(smPath, 'utf8')),
        family,
        window.kv_cache.gpu_total_tokens ?? null,
      )
    : null;
  const server = fromAiperf ?? window;
  // aiperf's export has no spec-decode block: the snapshots' counters, over the whole run (warmup included)
  if (fromAiperf !== null && window.spec_decode !== undefined) {
    server.spec_decode = window.spec_decode;
    server.warnings.push('spec_decode: counter deltas over the whole aiperf run (warmup included)');
  }
  if (fromAiperf === null)
    server.warnings.push(
      'aiperf adapter: no server_metrics_export.json; server counter deltas span the whole aiperf run (warmup included)',
    );
  return server;
}

/** The record's measured blocks: accounting, request metrics, server metrics and the validity verdict. */
function measure(
  c: AiperfRunContext,
  out: AiperfRunOutcome,
  snaps: { start: EndpointSnapshot[]; end: EndpointSnapshot[] },
) {
  const { agg, records, originWallMs } = readExports(c.artifactDir, out, c.input.endpoints[0]!);
  const acc = accounting(records);
  const metrics = requestMetrics(records, c.input.gpuCount);
  const tch = agg.theoretical_prefix_cache_hit?.avg;
  metrics.cache.theoretical_cache_hit_rate = tch === null || tch === undefined ? null : tch / 100;
  const profiled = records.filter((r) => r.phase === 'profiling');
  const profStart = profiled.length ? Math.min(...profiled.map((r) => r.start_ms)) : null;
  const server = serverMetrics(c, snaps.start, snaps.end);
  const roleChecks = aiperfRoleChecks(c, snaps, records, agg);
  const collapse = collapsedStreams(records);
  const serverMissing: string[] = [];
  if (c.input.metricsEndpoints.length === 0) serverMissing.push('no metrics endpoints given');
  else if (server.tokens.generation === null) serverMissing.push('generation-token counter delta unavailable');
  const v = validity({
    settings: c.settings,
    accounting: acc,
    successes: profiled.filter((r) => r.ok).length,
    coverage: profStart === null ? 0 : metricCoverage(records, profStart, c.settings.profileDurationSeconds),
    clientSaturatedReason: collapse.reason,
    concurrencyHeld: null,
    runCancelledReason: out.exitCode === 0 ? null : `aiperf exited ${out.exitCode}`,
    serverMetricsMissing: serverMissing,
    idleRankMessages: [],
    roleMessages: roleChecks?.flatMap((r) => (r.message === null ? [] : [r.message])) ?? [],
    prefixCacheReason: prefixCacheGate(records, server.cache.prefix_hits, c.settings.requireCachedTokens ?? false),
    outputTokens: outputTokensOf(records),
  });
  const reasons = [...(agg.metadata?.submission_invalid_reasons ?? []).map((r) => `aiperf:${r}`), ...v.reasons];
  const lastEnd = profiled.reduce((mx, r) => Math.max(mx, r.end_ms), -Infinity);
  const measuredSeconds = profStart !== null && Number.isFinite(lastEnd) ? (lastEnd - profStart) / 1000 : null;
  return {
    agg,
    records,
    acc,
    metrics,
    profiled,
    server,
    roleChecks,
    reasons,
    valid: v.valid && (agg.metadata?.submission_valid ?? true),
    measuredSeconds,
    collapse,
    // the profiled requests' span on the wall clock (epoch ms), where run.ts's DCGM sampler stamps its scrapes
    wallWindow: {
      originWallMs: 0,
      profileStartMs: profStart === null ? null : originWallMs + profStart,
      profileEndMs: profStart !== null && Number.isFinite(lastEnd) ? originWallMs + lastEnd : null,
    },
  };
}

/** Parse the exports, write requests.jsonl and result.json into the point folder, return the record. */
export function aiperfRecord(
  c: AiperfRunContext,
  out: AiperfRunOutcome,
  snaps: { start: EndpointSnapshot[]; end: EndpointSnapshot[] },
  concurrentPointsMax: number | null = null,
  dcgm?: Pick<DcgmSampler, 'scrapes'>,
): PointResult {
  const m = measure(c, out, snaps);
  const { input, settings } = c;
  // the GPU energy of the span of the record's profiled requests (the same integral and gates as infersweep's client,
  // ../point.ts windowEnergy); aiperf's aggregate start_time / end_time are naive local times of the host it ran on,
  // so they are not used
  const energy =
    dcgm === undefined
      ? undefined
      : windowEnergy({ ...m.wallWindow, records: m.records }, dcgm, input.gpuCount, input.gpuTelemetry);
  const recordPath = join(input.outDir, POINT_RECORD_FILE);
  const reqPath = join(input.outDir, POINT_REQUESTS_FILE);
  const result = pointResultSchema.parse({
    ...recordHeader(input, { name: 'aiperf', version: m.agg.aiperf_version ?? 'unknown' }, c.identity, settings),
    dataset: {
      ...(input.traceFile
        ? { source_type: 'file', loader: 'weka_trace', path: input.traceFile, seed: null, entry_count: c.entries }
        : { source_type: 'public', loader: c.loader, path: null, seed: null, entry_count: c.entries }),
      ...aiperfDatasetMetadata(m.agg),
    },
    num_requests_total: m.acc.records_total,
    num_requests_successful: m.profiled.filter((r) => r.ok).length,
    request_accounting: m.acc,
    request_metrics: m.metrics,
    ...(input.goodput ? { goodput: requestGoodput(m.records, input.goodput) } : {}),
    slo_uncertainty: sloUncertainty(m.records, input.concurrency),
    concurrency: {
      target_sessions: input.concurrency,
      time_weighted_sessions: null,
      time_weighted_busy_lanes: null,
      time_weighted_requests_in_flight: m.agg.effective_concurrency?.avg ?? null,
      max_requests_in_flight: Math.round(m.agg.effective_concurrency?.max ?? 0),
      subagent_requests_profiled: m.profiled.filter((r) => r.kind === 'subagent').length,
      plays_started: 0,
    },
    client_health: clientHealth(out, concurrentPointsMax, m.collapse.reason),
    server_metrics: m.server,
    ...(energy === undefined ? {} : { energy }),
    idle_rank_checks: [checkIdleRanks([], null, 'post-warmup', input.family ?? 'vllm')].map((ch) =>
      input.expectedEngines
        ? { ...ch, message: 'not checked by the aiperf adapter (run checkIdleRanks on the deployment)' }
        : ch,
    ),
    ...(m.roleChecks === undefined ? {} : { role_checks: m.roleChecks }),
    timing: {
      started_at: c.startedAt.toISOString(),
      profiling_started_at: m.agg.start_time ?? null,
      profiling_ended_at: m.agg.end_time ?? null,
      ended_at: new Date().toISOString(),
      profile_duration_seconds: settings.profileDurationSeconds,
      measured_profile_seconds: m.measuredSeconds,
      warmup_seconds: null,
    },
    submission_valid: m.valid,
    submission_invalid_reasons: m.reasons,
    warnings: m.collapse.warning === null ? [] : [m.collapse.warning],
    artifacts: { record: recordPath, requests_jsonl: reqPath, command: c.commandPath, raw_dir: c.artifactDir },
  });
  writeJsonlAtomic(reqPath, m.records);
  writeFileAtomic(recordPath, JSON.stringify(result, null, 2) + '\n');
  return result;
}

/**
 * The P/D role gate (server/idle-ranks.ts checkRoles, docs/topology-rules.md rule 27) of an aiperf point:
 * undefined unless the deployment is disaggregated. aiperf's phases are not visible from outside, so the
 * window is the whole aiperf run (the snapshots run.ts takes before aiperf starts and after it exits) and
 * the client's count is every successful row of its export, warmup included; the tolerance is the most
 * requests it had in flight (a request aiperf cancelled at the end may still have finished on the server).
 */
function aiperfRoleChecks(
  c: AiperfRunContext,
  snaps: { start: EndpointSnapshot[]; end: EndpointSnapshot[] },
  records: RequestRecord[],
  agg: AiperfAggregate,
) {
  const roles = c.input.metricsRoles;
  if (roles === undefined) return undefined;
  const maxInFlight = Math.max(c.input.concurrency, Math.ceil(agg.effective_concurrency?.max ?? 0));
  const client = { requests: records.filter((r) => r.ok).length, maxInFlight };
  return checkRoles(snaps.start, snaps.end, roles, client, c.input.family);
}

/** aiperf's health: its CPU, and its streams read whole (../client-health.ts collapsedStreams). */
function clientHealth(out: AiperfRunOutcome, concurrentPointsMax: number | null, collapsed: string | null) {
  const cpu = out.childCpuSeconds !== null && out.wallSeconds > 0 ? out.childCpuSeconds / out.wallSeconds : null;
  return {
    ...(concurrentPointsMax === null ? {} : { concurrent_points_max: concurrentPointsMax }),
    event_loop_delay_p99_ms: null,
    event_loop_delay_max_ms: null,
    cpu_fraction: cpu,
    peak_rss_bytes: null,
    saturated: collapsed !== null,
    reason: collapsed,
  };
}

/** aiperf's own `metadata.dataset` (what InferenceX copies into its aggregate), when it wrote one. */
function aiperfDatasetMetadata(agg: AiperfAggregate): { aiperf_metadata?: Record<string, unknown> } {
  const d = (agg.metadata as Record<string, unknown> | undefined)?.dataset;
  return d !== null && typeof d === 'object' && !Array.isArray(d)
    ? { aiperf_metadata: { ...(d as Record<string, unknown>) } }
    : {};
}
