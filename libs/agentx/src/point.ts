import { monitorEventLoopDelay } from 'node:perf_hooks';
import { join } from 'node:path';
import { agentxSettingsSchema, type AgentxSettings, type AgentxSettingsInput } from '@infersweep/topology';
import { POINT_RECORD_FILE, POINT_REQUESTS_FILE } from '@infersweep/core';
import { IdleRankError, RecordInvalidError } from './errors';
import { replay, type Progress } from './client/replay';
import { publishDir, writeFileAtomic, writeJsonlAtomic } from './io';
import { accounting, metricCoverage, requestMetrics } from './metrics/aggregate';
import { prefixCacheGate, validity } from './metrics/validity';
import {
  identitySchema,
  pointResultSchema,
  type PointIdentity,
  type PointIdentityInput,
  type PointResult,
  type RequestRecord,
} from './result';
import type { EngineFamily } from './server/families';
import { checkIdleRanks, type IdleRankCheck } from './server/idle-ranks';
import { parsePrometheus, type Sample } from './server/prometheus';
import { scrapeText } from './server/scrape';
import { engineWindows, serverMetricsWindow, type EndpointSnapshot } from './server/window';
import { resolveTracesAsync } from './traces';

export const CLIENT_VERSION = '0.1.0';

export interface RunPointInput {
  concurrency: number;
  endpoints: string[];
  metricsEndpoints: string[];
  servedModel: string;
  settings: AgentxSettingsInput | AgentxSettings;
  gpuCount: number;
  expectedEngines?: number[] | null;
  identity: PointIdentityInput;
  outDir?: string;
  family?: EngineFamily;
}

export interface RunPointHooks {
  onProgress?(p: Progress): void;
  signal?: AbortSignal;
}

/**
 * Scrape every metrics endpoint. Samples whose value is not finite (NaN, ±Inf: legal in the
 * exposition format, poison in a delta) are dropped and counted in `dropped`, never summed.
 */
export async function snapshot(endpoints: string[], timeoutSeconds: number): Promise<EndpointSnapshot[]> {
  return Promise.all(
    endpoints.map(async (endpoint) => {
      try {
        const all = parsePrometheus(await scrapeText(endpoint, timeoutSeconds)).samples;
        const samples = all.filter((x) => Number.isFinite(x.value));
        const dropped = all.filter((x) => !Number.isFinite(x.value)).map((x) => x.name);
        return dropped.length ? { endpoint, samples, dropped } : { endpoint, samples };
      } catch (err) {
        return { endpoint, samples: null, error: (err as Error).message };
      }
    }),
  );
}

/** One warning per endpoint that sent non-finite samples, naming the metrics (pure). */
export function droppedSampleWarnings(snapshots: EndpointSnapshot[][]): string[] {
  const per = new Map<string, Map<string, number>>();
  for (const snap of snapshots)
    for (const e of snap)
      for (const name of e.dropped ?? []) {
        const m = per.get(e.endpoint) ?? new Map<string, number>();
        m.set(name, (m.get(name) ?? 0) + 1);
        per.set(e.endpoint, m);
      }
  return [...per].map(([ep, m]) => `${ep}: non-finite samples dropped (${[...m].map(([n, k]) => `${n} ×${k}`).join(', ')})`);
}

/** Client self-monitoring over the profiling window: event-loop delay and CPU (fraction of one core). */
class ClientHealth {
  private readonly h = monitorEventLoopDelay({ resolution: 10 });
  private cpu0 = process.cpuUsage();
  private t0 = performance.now();
  private cpuFraction: number | null = null;
  start(): void {
    this.h.reset();
    this.h.enable();
    this.cpu0 = process.cpuUsage();
    this.t0 = performance.now();
  }
  stop(): void {
    this.h.disable();
    const d = process.cpuUsage(this.cpu0);
    const wall = (performance.now() - this.t0) * 1000;
    this.cpuFraction = wall > 0 ? (d.user + d.system) / wall : null;
  }
  result(limits: AgentxSettings['clientHealth']): PointResult['client_health'] {
    const count = this.h.count;
    // the histogram's floor is its resolution (10 ms timer): report the delay beyond it
    const p99 = count > 0 ? Math.max(0, this.h.percentile(99) / 1e6 - 10) : null;
    const max = count > 0 ? Math.max(0, this.h.max / 1e6 - 10) : null;
    const reasons: string[] = [];
    if (p99 !== null && p99 > limits.maxEventLoopDelayP99Ms)
      reasons.push(`event-loop delay p99 ${p99.toFixed(2)} ms > ${limits.maxEventLoopDelayP99Ms} ms`);
    if (this.cpuFraction !== null && this.cpuFraction > limits.maxCpuFraction)
      reasons.push(`client CPU ${(this.cpuFraction * 100).toFixed(0)} % of a core > ${(limits.maxCpuFraction * 100).toFixed(0)} %`);
    return {
      event_loop_delay_p99_ms: p99,
      event_loop_delay_max_ms: max,
      cpu_fraction: this.cpuFraction,
      peak_rss_bytes: process.resourceUsage().maxRSS * 1024,
      saturated: reasons.length > 0,
      reason: reasons.length ? reasons.join('; ') : null,
    };
  }
}

/** The fields every result record starts with, whichever client measured the point. */
export function recordHeader(
  input: RunPointInput,
  client: { name: 'infersweep' | 'aiperf'; version: string },
  identity: PointIdentity,
  settings: AgentxSettings,
) {
  return {
    schema_version: 1 as const,
    scenario_type: 'agentic-coding' as const,
    benchmark_type: 'agentic_traces' as const,
    client,
    identity,
    conc: input.concurrency,
    served_model: input.servedModel,
    endpoints: input.endpoints,
    metrics_endpoints: input.metricsEndpoints,
    gpu_count: input.gpuCount,
    settings,
  };
}

/**
 * Run one AgentX concurrency point with infersweep's client, end to end: traces → warmup → cache
 * pressure → post-warmup idle-rank check → profiling → drain of in-flight → metrics, server metrics,
 * validity → result record (+ per-request JSONL, written atomically when outDir is given).
 */
// eslint-disable-next-line max-lines-per-function -- 169 lines, over the 80-line budget until it is split (docs/conventions.md)
export async function runPoint(input: RunPointInput, hooks: RunPointHooks = {}): Promise<PointResult> {
  const settings = agentxSettingsSchema.parse(input.settings);
  const identity = identitySchema.parse(input.identity);
  const family = input.family ?? 'vllm';
  const startedAt = new Date();
  // off the event loop and once per process: the worker's other activities keep heartbeating
  const { traces, dataset } = await resolveTracesAsync(settings.traces);
  const idleChecks: IdleRankCheck[] = [];
  const scrapeTimeout = settings.drain.scrapeTimeoutSeconds;

  // readiness-phase idle-rank check (engine labels present). A missing engine is recorded, not thrown:
  // the warmup then shows whether that rank serves, and the post-warmup check ends the point invalid
  // with the rank named (the bash runner's hybrid-LB defect), keeping per-engine counts in the record.
  let pointStart: Sample[] | undefined;
  if (input.expectedEngines && input.metricsEndpoints.length > 0) {
    const snap = await snapshot(input.metricsEndpoints, scrapeTimeout);
    const bad = snap.find((x) => x.samples === null);
    if (bad)
      throw new IdleRankError(`readiness idle-rank check: scrape of ${bad.endpoint} failed: ${bad.error}`, [], { step: 'readiness' });
    pointStart = snap.flatMap((x) => x.samples ?? []);
    idleChecks.push(checkIdleRanks(pointStart, input.expectedEngines, 'readiness', family));
  } else idleChecks.push(checkIdleRanks([], input.expectedEngines, 'readiness', family));

  const health = new ClientHealth();
  let startSnap: EndpointSnapshot[] = [];
  let endSnap: EndpointSnapshot[] = [];
  const during: EndpointSnapshot[][] = [];
  let sampler: NodeJS.Timeout | undefined;
  let sampling = false;
  const records: RequestRecord[] = [];

  const r = await replay({
    traces,
    concurrency: input.concurrency,
    endpoints: input.endpoints,
    model: input.servedModel,
    settings,
    expectedEngines: input.expectedEngines,
    onRecord: (rec) => records.push(rec),
    onProgress: hooks.onProgress,
    signal: hooks.signal,
    beforeProfile: async () => {
      startSnap = await snapshot(input.metricsEndpoints, scrapeTimeout);
      if (input.expectedEngines && input.metricsEndpoints.length > 0) {
        // requests served during this point's warmup (since pointStart): readiness probes and earlier
        // points cannot make an idle rank look busy
        const c = checkIdleRanks(
          startSnap.flatMap((x) => x.samples ?? []),
          input.expectedEngines,
          'post-warmup',
          family,
          pointStart,
        );
        idleChecks.push(c);
        // a deployment with an idle rank measures fewer GPUs than it claims: no profile, invalid point
        if (!c.ok) return { cancel: c.message ?? 'idle DP rank' };
      } else idleChecks.push(checkIdleRanks([], input.expectedEngines, 'post-warmup', family));
      if (input.metricsEndpoints.length > 0)
        sampler = setInterval(() => {
          if (sampling) return;
          sampling = true;
          void snapshot(input.metricsEndpoints, scrapeTimeout).then((s) => {
            during.push(s);
            sampling = false;
          });
        }, settings.serverMetricsIntervalSeconds * 1000);
      health.start();
    },
    afterProfile: async () => {
      health.stop();
      clearInterval(sampler);
      endSnap = await snapshot(input.metricsEndpoints, scrapeTimeout);
    },
  });
  clearInterval(sampler);
  const endedAt = new Date();

  const acc = accounting(r.records);
  const metrics = requestMetrics(r.records, input.gpuCount);
  const successes = r.records.filter((x) => x.phase === 'profiling' && x.ok).length;
  const coverage = r.profileStartMs === null ? 0 : metricCoverage(r.records, r.profileStartMs, settings.profileDurationSeconds);
  const server = input.metricsEndpoints.length
    ? serverMetricsWindow(startSnap, endSnap, during, family)
    : serverMetricsWindow([], [], [], family);
  // Per-engine counts run to the last profiled request's end (the window's end snapshot is taken when
  // issuance stops, before the in-flight requests finish): each engine's share of the profiled requests.
  if (r.profileStartMs !== null && startSnap.length > 0) {
    server.per_engine = engineWindows(startSnap, await snapshot(input.metricsEndpoints, scrapeTimeout), [...during, endSnap], family);
  }
  const serverMissing: string[] = [];
  if (input.metricsEndpoints.length === 0) serverMissing.push('no metrics endpoints given');
  else {
    if (server.tokens.prompt === null) serverMissing.push('prompt-token counter delta unavailable');
    if (server.tokens.generation === null) serverMissing.push('generation-token counter delta unavailable');
    if (server.kv_cache.gpu_usage_pct === null) serverMissing.push('KV-cache usage gauge unavailable');
  }
  const ch =
    r.profileStartMs !== null
      ? health.result(settings.clientHealth)
      : {
          event_loop_delay_p99_ms: null,
          event_loop_delay_max_ms: null,
          cpu_fraction: null,
          peak_rss_bytes: process.resourceUsage().maxRSS * 1024,
          saturated: false,
          reason: null,
        };
  const sessionsAvg = r.sessions.average();
  const v = validity({
    settings,
    accounting: acc,
    successes,
    coverage,
    clientSaturatedReason: ch.reason,
    concurrencyHeld: sessionsAvg === null ? null : sessionsAvg / input.concurrency,
    runCancelledReason: r.runCancelledReason,
    serverMetricsMissing: serverMissing,
    idleRankMessages: idleChecks.filter((c) => !c.ok).map((c) => c.message ?? 'idle rank'),
    prefixCacheReason: prefixCacheGate(r.records, server.cache.prefix_hits, settings.requireCachedTokens ?? false),
  });
  const wall = (ms: number | null): string | null => (ms === null ? null : new Date(r.originWallMs + ms).toISOString());
  // This attempt's artifacts go to their own folder, published as outDir by one rename at the end
  // (an attempt that dies leaves its `.partial-` folder, never a half-written outDir).
  const staging = input.outDir ? `${input.outDir}.partial-${r.runId.slice(0, 8)}` : null;
  const recordPath = input.outDir ? join(input.outDir, POINT_RECORD_FILE) : null;
  const jsonlPath = input.outDir ? join(input.outDir, POINT_REQUESTS_FILE) : null;
  // the raw requests first: whatever happens to the record, the measurement is on disk
  if (staging) writeJsonlAtomic(join(staging, POINT_REQUESTS_FILE), r.records);
  const profiled = r.records.filter((x) => x.phase === 'profiling');
  const lastEnd = profiled.reduce((m, x) => Math.max(m, x.end_ms), -Infinity);
  const warnings = [...r.warnings, ...droppedSampleWarnings([startSnap, endSnap, ...during])];
  const raw = {
    ...recordHeader(input, { name: 'infersweep', version: CLIENT_VERSION }, identity, settings),
    dataset,
    num_requests_total: acc.records_total,
    num_requests_successful: successes,
    request_accounting: acc,
    request_metrics: metrics,
    concurrency: {
      target_sessions: input.concurrency,
      time_weighted_sessions: sessionsAvg,
      time_weighted_busy_lanes: r.busyLanes.average(),
      time_weighted_requests_in_flight: r.inFlight.average(),
      max_requests_in_flight: r.inFlight.max,
      subagent_requests_profiled: profiled.filter((x) => x.kind === 'subagent').length,
      plays_started: r.playsStarted,
    },
    client_health: ch,
    server_metrics: server,
    idle_rank_checks: idleChecks,
    timing: {
      started_at: startedAt.toISOString(),
      profiling_started_at: wall(r.profileStartMs),
      profiling_ended_at: wall(r.profileEndMs),
      ended_at: endedAt.toISOString(),
      profile_duration_seconds: settings.profileDurationSeconds,
      measured_profile_seconds: r.profileStartMs !== null && Number.isFinite(lastEnd) ? (lastEnd - r.profileStartMs) / 1000 : null,
      warmup_seconds: r.profileStartMs !== null ? (r.profileStartMs - r.warmupStartMs) / 1000 : null,
    },
    submission_valid: v.valid,
    submission_invalid_reasons: v.reasons,
    warnings,
    artifacts: { record: recordPath, requests_jsonl: jsonlPath, command: null, raw_dir: null },
  };
  const parsed = pointResultSchema.safeParse(raw);
  if (!parsed.success) {
    const reasons = parsed.error.issues.slice(0, 5).map((i) => `record field ${i.path.join('.')}: ${i.message}`);
    let kept: string | null = null;
    if (staging) {
      // keep the unvalidated record next to the raw requests, as evidence; never as result.json
      writeFileAtomic(
        join(staging, 'result.invalid.json'),
        JSON.stringify(raw, (_k, x: unknown) => (typeof x === 'number' && !Number.isFinite(x) ? String(x) : x), 2) + '\n',
      );
      publishDir(staging, input.outDir!);
      kept = join(input.outDir!, 'result.invalid.json');
    }
    throw new RecordInvalidError(reasons, kept, { step: `point:c=${input.concurrency}` });
  }
  const result = parsed.data;
  if (staging) {
    writeFileAtomic(join(staging, POINT_RECORD_FILE), JSON.stringify(result, null, 2) + '\n');
    publishDir(staging, input.outDir!);
  }
  return result;
}
