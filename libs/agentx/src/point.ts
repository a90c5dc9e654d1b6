import { join } from 'node:path';
import {
  agentxSettingsSchema,
  type AgentxSettings,
  type AgentxSettingsInput,
  type GoodputSlo,
} from '@infersweep/topology';
import { POINT_RECORD_FILE, POINT_REQUESTS_FILE } from '@infersweep/core';
import { RecordInvalidError } from './errors';
import { replay, type Progress, type ReplayResult } from './client/replay';
import { ClientHealth } from './client-health';
import { publishDir, writeFileAtomic, writeJsonlAtomic } from './io';
import { accounting, metricCoverage, requestGoodput, requestMetrics, sloUncertainty } from './metrics/aggregate';
import { outputTokensOf, prefixCacheGate, validity } from './metrics/validity';
import { ProfileWindow, serverMetricsMissing } from './profile-window';
import {
  identitySchema,
  pointResultSchema,
  type PointIdentity,
  type PointIdentityInput,
  type PointResult,
} from './result';
import { pointDcgmSampler, type DcgmSampler, type DcgmTarget } from './server/dcgm-sampler';
import { dcgmPointEnergy, type PointEnergy } from './server/energy';
import type { EngineFamily } from './server/families';
import { parsePrometheus } from './server/prometheus';
import { scrapeText } from './server/scrape';
import { acceptanceWarning } from './server/spec-decode';
import { checkRoles } from './server/idle-ranks';
import type { EndpointSnapshot, ServerMetrics } from './server/window';
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
  /** Per-request SLO bounds: the record gets its goodput attainment (search.slo.goodput). */
  goodput?: GoodputSlo;
  /** The recipe's expected speculative acceptance length (the plan's `speculative`): a point far from it gets a warning. */
  expectedAcceptanceLength?: number;
  /** A disaggregated deployment: the role of each metrics endpoint (prefill/decode); an idle role invalidates the point. */
  metricsRoles?: string[];
  /** Headers sent with every request (a P/D router's prefillers, `x-prefiller-host-port`). */
  requestHeaders?: Record<string, string>;
  /** The nodes' DCGM exporters (the plan's `gpuTelemetry`): the record gets the window's GPU energy and cost. */
  gpuTelemetry?: PointGpuTelemetry;
}

export interface PointGpuTelemetry {
  targets: DcgmTarget[];
  intervalSeconds: number;
  /** The worker's price of one GPU-hour of the deployment's GPU model (absent: no $/M tokens). */
  pricePerGpuHour?: number;
  /** A P/D deployment's role of each node (a target's `host`): the energy is split per role. */
  nodeRoles?: Readonly<Record<string, 'prefill' | 'decode'>>;
}

export interface RunPointHooks {
  onProgress?(p: Progress): void;
  signal?: AbortSignal;
  /** The worker's count of points running now (client-process.ts): the record keeps the window's maximum. */
  concurrentPoints?: { current(): number; onChange(listen: (n: number) => void): void };
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
  return [...per].map(
    ([ep, m]) => `${ep}: non-finite samples dropped (${[...m].map(([n, k]) => `${n} ×${k}`).join(', ')})`,
  );
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
export async function runPoint(input: RunPointInput, hooks: RunPointHooks = {}): Promise<PointResult> {
  const settings = agentxSettingsSchema.parse(input.settings);
  const identity = identitySchema.parse(input.identity);
  const family = input.family ?? 'vllm';
  const startedAt = new Date();
  // off the event loop and once per process (a point run by runPointWithClient has a process of its own)
  const { traces, dataset } = await resolveTracesAsync(settings.traces);
  const scrapeTimeout = settings.drain.scrapeTimeoutSeconds;
  const window = new ProfileWindow(
    {
      metricsEndpoints: input.metricsEndpoints,
      expectedEngines: input.expectedEngines,
      family,
      intervalSeconds: settings.serverMetricsIntervalSeconds,
    },
    () => snapshot(input.metricsEndpoints, scrapeTimeout),
    input.gpuTelemetry === undefined
      ? undefined
      : // the replay's clock (client/replay.ts: performance.now() offsets), mapped to wall time with its origin
        pointDcgmSampler(input.gpuTelemetry, scrapeTimeout, () => performance.now()),
  );
  if (hooks.concurrentPoints) {
    const health = window.health;
    health.setConcurrentPoints(hooks.concurrentPoints.current());
    hooks.concurrentPoints.onChange((n) => health.setConcurrentPoints(n));
  }
  await window.readiness();
  const replayed = await replay({
    traces,
    concurrency: input.concurrency,
    endpoints: input.endpoints,
    model: input.servedModel,
    settings,
    expectedEngines: input.expectedEngines,
    ...(input.requestHeaders === undefined ? {} : { requestHeaders: input.requestHeaders }),
    onProgress: hooks.onProgress,
    signal: hooks.signal,
    beforeProfile: () => window.beforeProfile(),
    afterProfile: () => window.afterProfile(),
  });
  window.stopSampling();
  const endedAt = new Date();
  const server = await window.serverMetrics(replayed.profileStartMs !== null);
  // This attempt's artifacts go to their own folder, published as outDir by one rename at the end
  // (an attempt that dies leaves its `.partial-` folder, never a half-written outDir).
  const staging = input.outDir ? `${input.outDir}.partial-${replayed.runId.slice(0, 8)}` : null;
  // the raw requests first: whatever happens to the record, the measurement is on disk
  if (staging) writeJsonlAtomic(join(staging, POINT_REQUESTS_FILE), replayed.records);
  const raw = pointRecord({ input, identity, settings, dataset, replayed, window, server, startedAt, endedAt });
  return publishPoint(raw, input, staging);
}

interface PointRecordParts {
  input: RunPointInput;
  identity: PointIdentity;
  settings: AgentxSettings;
  dataset: Awaited<ReturnType<typeof resolveTracesAsync>>['dataset'];
  replayed: ReplayResult;
  window: ProfileWindow;
  server: ServerMetrics;
  startedAt: Date;
  endedAt: Date;
}

/** The unvalidated result record of a point measured by infersweep's client. */
function pointRecord(p: PointRecordParts) {
  const { input, settings, replayed: r, window, server } = p;
  const acc = accounting(r.records);
  const profiled = r.records.filter((x) => x.phase === 'profiling');
  const successes = profiled.filter((x) => x.ok).length;
  const coverage =
    r.profileStartMs === null ? 0 : metricCoverage(r.records, r.profileStartMs, settings.profileDurationSeconds);
  const clientHealth =
    r.profileStartMs !== null ? window.health.result(settings.clientHealth) : ClientHealth.unmeasured();
  const sessionsAvg = r.sessions.average();
  const roleChecks =
    input.metricsRoles === undefined
      ? undefined
      : checkRoles(window.startSnap, window.endSnap, input.metricsRoles, windowRequests(r), input.family);
  const v = validity({
    settings,
    accounting: acc,
    successes,
    coverage,
    clientSaturatedReason: clientHealth.reason,
    hostSaturatedReason: clientHealth.host_reason ?? null,
    concurrencyHeld: sessionsAvg === null ? null : sessionsAvg / input.concurrency,
    runCancelledReason: r.runCancelledReason,
    serverMetricsMissing: serverMetricsMissing(input.metricsEndpoints.length, server),
    idleRankMessages: window.idleRankMessages(),
    roleMessages: roleChecks?.flatMap((c) => (c.message === null ? [] : [c.message])) ?? [],
    prefixCacheReason: prefixCacheGate(r.records, server.cache.prefix_hits, settings.requireCachedTokens ?? false),
    outputTokens: outputTokensOf(r.records),
  });
  return {
    ...recordHeader(input, { name: 'infersweep', version: CLIENT_VERSION }, p.identity, settings),
    dataset: p.dataset,
    num_requests_total: acc.records_total,
    num_requests_successful: successes,
    request_accounting: acc,
    request_metrics: requestMetrics(r.records, input.gpuCount),
    ...(input.goodput ? { goodput: requestGoodput(r.records, input.goodput) } : {}),
    slo_uncertainty: sloUncertainty(r.records, input.concurrency),
    concurrency: {
      target_sessions: input.concurrency,
      time_weighted_sessions: sessionsAvg,
      time_weighted_busy_lanes: r.busyLanes.average(),
      time_weighted_requests_in_flight: r.inFlight.average(),
      max_requests_in_flight: r.inFlight.max,
      subagent_requests_profiled: profiled.filter((x) => x.kind === 'subagent').length,
      plays_started: r.playsStarted,
    },
    client_health: clientHealth,
    server_metrics: server,
    ...(window.dcgm === undefined || input.gpuTelemetry === undefined
      ? {}
      : { energy: windowEnergy(r, window.dcgm, input.gpuCount, input.gpuTelemetry) }),
    idle_rank_checks: window.idleChecks,
    ...(roleChecks === undefined ? {} : { role_checks: roleChecks }),
    timing: pointTiming(r, settings.profileDurationSeconds, p.startedAt, p.endedAt),
    submission_valid: v.valid,
    submission_invalid_reasons: v.reasons,
    warnings: [
      ...r.warnings,
      ...droppedSampleWarnings(window.snapshots()),
      ...[acceptanceWarning(server.spec_decode ?? null, input.expectedAcceptanceLength)].filter((w) => w !== null),
    ],
    artifacts: {
      record: input.outDir ? join(input.outDir, POINT_RECORD_FILE) : null,
      requests_jsonl: input.outDir ? join(input.outDir, POINT_REQUESTS_FILE) : null,
      command: null,
      raw_dir: null,
    },
  };
}

/**
 * The GPU energy of the profile window (its start to its end, when issuance stopped) from the DCGM scrapes,
 * over the tokens of the window's successful profiled requests; absent when the point had no profile. The
 * scrapes and the window are on the same clock (the replay's monotonic ms from its wall-clock origin).
 */
export function windowEnergy(
  r: Pick<ReplayResult, 'records' | 'originWallMs' | 'profileStartMs' | 'profileEndMs'>,
  dcgm: Pick<DcgmSampler, 'scrapes'>,
  gpus: number,
  telemetry: Pick<PointGpuTelemetry, 'pricePerGpuHour' | 'nodeRoles'> = {},
): PointEnergy | undefined {
  if (r.profileStartMs === null || r.profileEndMs === null) return undefined;
  const wall = (ms: number) => (r.originWallMs + ms) / 1000;
  const ok = r.records.filter((x) => x.phase === 'profiling' && x.ok);
  return dcgmPointEnergy({
    scrapes: dcgm.scrapes.map((s) => ({ ...s, t: wall(s.t) })),
    window: { start: wall(r.profileStartMs), end: wall(r.profileEndMs) },
    gpus,
    tokens: {
      input: ok.reduce((a, x) => a + (x.isl ?? 0), 0),
      output: ok.reduce((a, x) => a + (x.osl ?? 0), 0),
      requests: ok.length,
    },
    ...(telemetry.pricePerGpuHour === undefined ? {} : { pricePerGpuHour: telemetry.pricePerGpuHour }),
    ...(telemetry.nodeRoles === undefined ? {} : { nodeRoles: telemetry.nodeRoles }),
  });
}

/**
 * What the client measured inside the profile window, for the P/D role gate (server/idle-ranks.ts checkRoles):
 * its successful requests that ended in the window and the most it had in flight; null without a profile.
 */
function windowRequests(
  r: Pick<ReplayResult, 'records' | 'profileStartMs' | 'profileEndMs' | 'inFlight'>,
): { requests: number; maxInFlight: number } | null {
  const { profileStartMs: a, profileEndMs: b } = r;
  if (a === null || b === null) return null;
  const requests = r.records.filter((x) => x.ok && x.end_ms >= a && x.end_ms <= b).length;
  return { requests, maxInFlight: r.inFlight.max };
}

/**
 * A point's timing (pure): wall-clock times of the profile window from the run's monotonic
 * offsets, and the measured profile, from its start to the last profiled request's end.
 */
export function pointTiming(
  r: Pick<ReplayResult, 'records' | 'originWallMs' | 'warmupStartMs' | 'profileStartMs' | 'profileEndMs'>,
  profileDurationSeconds: number,
  startedAt: Date,
  endedAt: Date,
): PointResult['timing'] {
  const wall = (ms: number | null): string | null => (ms === null ? null : new Date(r.originWallMs + ms).toISOString());
  const lastEnd = r.records.filter((x) => x.phase === 'profiling').reduce((m, x) => Math.max(m, x.end_ms), -Infinity);
  return {
    started_at: startedAt.toISOString(),
    profiling_started_at: wall(r.profileStartMs),
    profiling_ended_at: wall(r.profileEndMs),
    ended_at: endedAt.toISOString(),
    profile_duration_seconds: profileDurationSeconds,
    measured_profile_seconds:
      r.profileStartMs !== null && Number.isFinite(lastEnd) ? (lastEnd - r.profileStartMs) / 1000 : null,
    warmup_seconds: r.profileStartMs !== null ? (r.profileStartMs - r.warmupStartMs) / 1000 : null,
  };
}

/**
 * Validate the record; publish the attempt's staging folder as outDir with result.json, or, when the
 * record is invalid, with the unvalidated record kept as evidence, never as result.json.
 */
function publishPoint(raw: ReturnType<typeof pointRecord>, input: RunPointInput, staging: string | null): PointResult {
  const parsed = pointResultSchema.safeParse(raw);
  if (!parsed.success) {
    const reasons = parsed.error.issues.slice(0, 5).map((i) => `record field ${i.path.join('.')}: ${i.message}`);
    let kept: string | null = null;
    if (staging) {
      writeFileAtomic(
        join(staging, 'result.invalid.json'),
        JSON.stringify(raw, (_k, x: unknown) => (typeof x === 'number' && !Number.isFinite(x) ? String(x) : x), 2) +
          '\n',
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
