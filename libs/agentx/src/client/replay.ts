import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import type { AgentxSettings } from '@infersweep/topology';
import { PointAbortedError } from '../errors';
import { hash32 } from '../rng';
import type { RequestPhase, RequestRecord } from '../result';
import { BlockCache, blockLayout, buildChatBody } from '../trace/prompt';
import type { WekaLeafRequest, WekaSubagent, WekaTrace } from '../trace/model';
import { EndpointPool, streamChat } from './http';
import { sampleStartIndex, systemIdleShift, theoreticalHitTokens, thinkGapSeconds, TimeWeighted, traceOrder } from './plan';

export type Phase = 'warmup' | 'cache-pressure' | 'profiling' | 'draining' | 'done';
export interface Progress {
  phase: Phase;
  completed: number;
  inFlight: number;
  etaSeconds: number | null;
}

export interface ReplayOptions {
  traces: WekaTrace[];
  concurrency: number;
  endpoints: string[];
  model: string;
  settings: AgentxSettings;
  expectedEngines?: number[] | null;
  onRecord?(r: RequestRecord): void;
  onProgress?(p: Progress): void;
  /** Called after warmup drained, before profiling starts (server snapshot, idle-rank check). May throw. */
  beforeProfile?(): Promise<void>;
  /** Called right after the profile window closes (server snapshot). */
  afterProfile?(): Promise<void>;
  signal?: AbortSignal;
}

type Budget = (() => boolean) & { peek(): boolean };

export interface ReplayResult {
  runId: string;
  records: RequestRecord[];
  originWallMs: number;
  warmupStartMs: number;
  profileStartMs: number | null;
  profileEndMs: number | null;
  endMs: number;
  runCancelledReason: string | null;
  sessions: TimeWeighted;
  busyLanes: TimeWeighted;
  inFlight: TimeWeighted;
  playsStarted: number;
  blockCacheBlocks: number;
}

/** Timers with the whole-system idle cap (AgentX scenario lock): see plan.systemIdleShift. */
class IdleCappedTimers {
  private readonly sleepers = new Set<{ wake: number; resolve: () => void; timer?: NodeJS.Timeout }>();
  private inFlight = 0;
  private pendingCheck = false;
  private closed = false;
  constructor(private readonly capMs: number) {}
  sleep(ms: number): Promise<void> {
    if (ms <= 0 || this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      const s: { wake: number; resolve: () => void; timer?: NodeJS.Timeout } = { wake: performance.now() + ms, resolve };
      this.sleepers.add(s);
      this.arm(s);
      this.scheduleCheck();
    });
  }
  started(): void {
    this.inFlight++;
  }
  ended(): void {
    this.inFlight--;
    if (this.inFlight === 0) this.scheduleCheck();
  }
  wakeAll(close = false): void {
    if (close) this.closed = true;
    for (const s of this.sleepers) {
      clearTimeout(s.timer);
      s.resolve();
    }
    this.sleepers.clear();
  }
  private arm(s: { wake: number; resolve: () => void; timer?: NodeJS.Timeout }): void {
    clearTimeout(s.timer);
    s.timer = setTimeout(() => {
      this.sleepers.delete(s);
      s.resolve();
    }, Math.max(0, s.wake - performance.now()));
  }
  /** Deferred so lanes that are ready (about to send) get to send first: "nothing in flight or ready". */
  private scheduleCheck(): void {
    if (this.pendingCheck) return;
    this.pendingCheck = true;
    setImmediate(() => {
      this.pendingCheck = false;
      const now = performance.now();
      const shift = systemIdleShift(now, [...this.sleepers].map((s) => s.wake), this.inFlight, this.capMs);
      if (shift > 0)
        for (const s of this.sleepers) {
          s.wake -= shift;
          this.arm(s);
        }
    });
  }
}

interface Play {
  lane: number;
  no: number;
  trace: WekaTrace;
  cache: BlockCache;
  marker: string;
  endpoint: string;
  dpRank: number | null;
  seen: Set<number>;
  pos: number;
  prevRoot: WekaLeafRequest | null;
  rootTurn: number;
  pending: Promise<void>[];
  background: Promise<void>[];
}

interface Lane {
  index: number;
  play: Play;
  inFlight: number;
  quota: number;
}

/**
 * Closed-loop AgentX replay: N lanes, each one live session tree (warmup primer at a sampled t*, then
 * the request-bounded cache-pressure stage with zero delay and 1 output token, then profiling for the
 * configured duration with end-to-start think times; a finished tree recycles the next trace from
 * turn 0 with a fresh cache-bust marker). No new requests after the profile window; in-flight ones
 * drain (bounded by the grace period) and count.
 */
export async function replay(opts: ReplayOptions): Promise<ReplayResult> {
  const s = opts.settings;
  const runId = randomUUID();
  const originWallMs = Date.now() - performance.now();
  const n = opts.concurrency;
  if (opts.traces.length === 0) throw new Error('replay: no traces');
  if (opts.endpoints.length === 0) throw new Error('replay: no endpoints');
  const pool = new EndpointPool(Math.max(16, Math.ceil((4 * n) / opts.endpoints.length)));
  const timers = new IdleCappedTimers(s.systemIdleGapCapSeconds * 1000);
  const records: RequestRecord[] = [];
  const order = traceOrder(opts.traces.length, s.randomSeed);
  let nextTrace = 0;
  const caches = new Map<string, BlockCache>();
  const playsPerEndpoint = new Map<string, number>(opts.endpoints.map((e) => [e, 0]));
  const runCtl = new AbortController();
  const graceCtl = new AbortController();
  const reqSignal = AbortSignal.any([runCtl.signal, graceCtl.signal]);
  setMaxListeners(0, reqSignal);
  const sessions = new TimeWeighted();
  const busyLanes = new TimeWeighted();
  const inFlight = new TimeWeighted();
  let phase: Phase = 'warmup';
  let stopped = false;
  let aborted = false;
  let runCancelledReason: string | null = null;
  let profileStartMs: number | null = null;
  let profileEndMs: number | null = null;
  let playsStarted = 0;
  let completed = 0;
  let profiledDone = 0;
  let profiledErrors = 0;
  let lastProgress = 0;
  const warmupStartMs = performance.now();
  const dp = s.stickyDpRouting && opts.expectedEngines && opts.expectedEngines.length > 0 ? opts.expectedEngines : null;

  const progress = (force = false): void => {
    if (!opts.onProgress) return;
    const now = performance.now();
    if (!force && now - lastProgress < 1000) return;
    lastProgress = now;
    const eta = phase === 'profiling' && profileStartMs !== null ? Math.max(0, (profileStartMs + s.profileDurationSeconds * 1000 - now) / 1000) : null;
    opts.onProgress({ phase, completed, inFlight: inFlight.current, etaSeconds: eta });
  };

  const onAbort = (): void => {
    aborted = true;
    stopped = true;
    runCtl.abort();
    timers.wakeAll(true);
  };
  if (opts.signal?.aborted) throw new PointAbortedError('point aborted before start');
  opts.signal?.addEventListener('abort', onAbort, { once: true });

  const cacheFor = (t: WekaTrace): BlockCache => {
    let c = caches.get(t.id);
    if (!c) {
      c = new BlockCache(t.id, t.block_size);
      caches.set(t.id, c);
    }
    return c;
  };

  const newPlay = (lane: number, prev: Play | null): Play => {
    if (prev) playsPerEndpoint.set(prev.endpoint, (playsPerEndpoint.get(prev.endpoint) ?? 1) - 1);
    const trace = opts.traces[order[nextTrace++ % order.length]!]!;
    let endpoint = opts.endpoints[0]!;
    for (const e of opts.endpoints) if ((playsPerEndpoint.get(e) ?? 0) < (playsPerEndpoint.get(endpoint) ?? 0)) endpoint = e;
    playsPerEndpoint.set(endpoint, (playsPerEndpoint.get(endpoint) ?? 0) + 1);
    const no = playsStarted++;
    const marker = `[rid:${runId.slice(0, 8)}-${hash32(runId, lane, no).toString(16).padStart(8, '0')}]`;
    return {
      lane,
      no,
      trace,
      cache: cacheFor(trace),
      marker,
      endpoint,
      dpRank: dp ? dp[hash32(marker) % dp.length]! : null,
      seen: new Set(),
      pos: 0,
      prevRoot: null,
      rootTurn: 0,
      pending: [],
      background: [],
    };
  };

  const laneBusy = (lane: Lane, delta: number): void => {
    const before = lane.inFlight;
    lane.inFlight += delta;
    const now = performance.now();
    if (before === 0 && lane.inFlight > 0) busyLanes.add(now, 1);
    if (before > 0 && lane.inFlight === 0) busyLanes.add(now, -1);
    inFlight.add(now, delta);
  };

  const issue = async (
    lane: Lane,
    play: Play,
    req: WekaLeafRequest,
    info: { kind: 'root' | 'subagent'; agentId: string | null; turn: number; phase: RequestPhase; maxTokens: number; systemTokens: number; marker: string; seen: Set<number> },
  ): Promise<RequestRecord> => {
    const layout = blockLayout(req, play.trace.block_size);
    const hit = theoreticalHitTokens(layout, info.seen);
    const body = buildChatBody({
      model: opts.model,
      maxTokens: info.maxTokens,
      layout,
      cache: play.cache,
      systemBlocks: Math.floor(info.systemTokens / play.trace.block_size),
      marker: info.marker,
    });
    timers.started();
    laneBusy(lane, 1);
    const o = await streamChat({
      pool,
      baseUrl: play.endpoint,
      body: body.chunks,
      bodyLength: body.length,
      headers: play.dpRank !== null ? { 'X-data-parallel-rank': String(play.dpRank) } : undefined,
      timeoutMs: s.requestTimeoutSeconds * 1000,
      signal: reqSignal,
    });
    laneBusy(lane, -1);
    timers.ended();
    let category = o.errorCategory;
    if (category === 'cancelled' && graceCtl.signal.aborted && !aborted) category = 'grace_cancelled';
    const ttft = o.firstTokenMs !== null ? o.firstTokenMs - o.startMs : null;
    const osl = o.completionTokens;
    const itl = o.ok && osl !== null && osl > 1 && o.firstTokenMs !== null && o.lastTokenMs !== null ? (o.lastTokenMs - o.firstTokenMs) / (osl - 1) : null;
    const rec: RequestRecord = {
      id: `${play.marker}:${info.kind === 'root' ? 'r' : info.agentId}:${info.turn}`,
      lane: lane.index,
      trace_id: play.trace.id,
      play: play.no,
      turn: info.turn,
      kind: info.kind,
      agent_id: info.agentId,
      phase: info.phase,
      endpoint: play.endpoint,
      start_ms: o.startMs,
      end_ms: o.endMs,
      ttft_ms: o.ok ? ttft : null,
      itl_ms: itl,
      e2el_ms: o.ok ? o.endMs - o.startMs : null,
      isl: o.promptTokens,
      osl,
      cached_tokens: o.cachedTokens,
      expected_isl: req.in,
      expected_osl: req.out,
      max_tokens: info.maxTokens,
      theoretical_cache_hit_tokens: hit,
      content_chunks: o.contentChunks,
      status: o.status,
      ok: o.ok,
      error_category: o.ok ? null : category,
      error: o.error,
    };
    records.push(rec);
    completed++;
    opts.onRecord?.(rec);
    if (info.phase === 'profiling') {
      profiledDone++;
      if (!o.ok && category !== 'context_overflow') profiledErrors++;
      if (
        !stopped &&
        phase === 'profiling' &&
        profiledDone >= Math.max(n, 10) &&
        profiledErrors / profiledDone > s.failedRequestThreshold
      ) {
        runCancelledReason = `failed-request threshold exceeded: ${profiledErrors}/${profiledDone} > ${s.failedRequestThreshold}`;
        stopProfile();
      }
    } else if (!o.ok && info.kind === 'root' && category !== 'context_overflow' && category !== 'cancelled' && !stopped) {
      runCancelledReason = `root warmup request failed: ${category}: ${o.error ?? ''}`.slice(0, 400);
      stopped = true;
      timers.wakeAll(true);
    }
    progress();
    return rec;
  };

  let profileTimer: NodeJS.Timeout | undefined;
  let resolveProfileStopped: () => void = () => undefined;
  const profileStopped = new Promise<void>((r) => (resolveProfileStopped = r));
  const stopProfile = (): void => {
    if (phase !== 'profiling') return;
    resolveProfileStopped();
    const now = performance.now();
    profileEndMs = now;
    sessions.close(now);
    busyLanes.close(now);
    inFlight.close(now);
    phase = 'draining';
    clearTimeout(profileTimer);
    timers.wakeAll(true);
    progress(true);
  };


  const runChild = async (lane: Lane, play: Play, sub: WekaSubagent, p: RequestPhase, budget: Budget, think: boolean, maxOut: number | null): Promise<void> => {
    const seen = new Set<number>();
    const marker = `${play.marker}[${sub.agent_id}]`;
    let prev: WekaLeafRequest | null = null;
    for (let i = 0; i < sub.requests.length; i++) {
      const r = sub.requests[i]!;
      if (think && i > 0) await timers.sleep(thinkGapSeconds(r, prev, s.traceIdleGapCapSeconds) * 1000);
      if (stopped || !budget()) return;
      await issue(lane, play, r, { kind: 'subagent', agentId: sub.agent_id, turn: i, phase: p, maxTokens: maxOut ?? r.out, systemTokens: sub.system_tokens, marker, seen });
      prev = r;
    }
  };

  const settle = async (play: Play): Promise<void> => {
    await Promise.all(play.pending);
    await Promise.all(play.background);
    play.pending = [];
    play.background = [];
  };

  const walk = async (lane: Lane, p: RequestPhase, budget: Budget, think: boolean, maxOut: number | null): Promise<void> => {
    for (;;) {
      if (stopped) return;
      const play = lane.play;
      const entries = play.trace.requests;
      if (play.pos >= entries.length) {
        await settle(play);
        if (stopped || !budget.peek()) return;
        lane.play = newPlay(lane.index, play);
        continue;
      }
      const e = entries[play.pos]!;
      if (e.type === 'subagent') {
        const child = runChild(lane, play, e, p, budget, think, maxOut);
        (e.status === 'async_launched' ? play.background : play.pending).push(child);
        play.pos++;
        continue;
      }
      if (play.pending.length > 0) {
        await Promise.all(play.pending);
        play.pending = [];
      }
      if (think && play.prevRoot) await timers.sleep(thinkGapSeconds(e, play.prevRoot, s.traceIdleGapCapSeconds) * 1000);
      if (stopped || !budget()) return;
      const rec = await issue(lane, play, e, {
        kind: 'root',
        agentId: null,
        turn: play.rootTurn,
        phase: p,
        maxTokens: maxOut ?? e.out,
        systemTokens: play.trace.system_tokens,
        marker: play.marker,
        seen: play.seen,
      });
      play.prevRoot = e;
      play.pos++;
      play.rootTurn++;
      if (rec.error_category === 'context_overflow') play.pos = entries.length; // a context overflow ends the session
    }
  };

  // ---- lanes
  const lanes: Lane[] = Array.from({ length: n }, (_, i) => ({ index: i, play: newPlay(i, null), inFlight: 0, quota: s.warmupRequestsPerLane }));

  const warmLane = async (lane: Lane): Promise<void> => {
    const play = lane.play;
    const roots: number[] = [];
    play.trace.requests.forEach((e, i) => {
      if (e.type !== 'subagent') roots.push(i);
    });
    const tStar = sampleStartIndex(roots.length, s.trajectoryStartMinRatio, s.trajectoryStartMaxRatio, s.randomSeed, lane.index, play.no);
    if (tStar > 0) {
      const primerIdx = roots[tStar - 1]!;
      const primer = play.trace.requests[primerIdx] as WekaLeafRequest;
      await issue(lane, play, primer, { kind: 'root', agentId: null, turn: tStar - 1, phase: 'warmup', maxTokens: 1, systemTokens: play.trace.system_tokens, marker: play.marker, seen: play.seen });
      play.prevRoot = primer;
      play.pos = primerIdx + 1;
      play.rootTurn = tStar;
    }
    const quota: Budget = Object.assign(() => (lane.quota > 0 ? (lane.quota--, true) : false), { peek: () => lane.quota > 0 });
    phase = phase === 'warmup' ? 'cache-pressure' : phase;
    if (!stopped) await walk(lane, 'cache-pressure', quota, false, 1);
    await settle(lane.play);
  };

  progress(true);
  const warm = Promise.all(lanes.map(warmLane));
  let graceTimer: NodeJS.Timeout | undefined;
  const warmDone = await Promise.race([
    warm.then(() => true),
    new Promise<boolean>((resolve) => {
      graceTimer = setTimeout(() => resolve(false), s.warmupGracePeriodSeconds * 1000);
    }),
  ]);
  clearTimeout(graceTimer);
  if (!warmDone) {
    runCancelledReason ??= `warmup did not drain within ${s.warmupGracePeriodSeconds} s`;
    stopped = true;
    runCtl.abort();
    await warm;
  }

  if (!stopped && opts.beforeProfile) {
    try {
      await opts.beforeProfile();
    } catch (err) {
      opts.signal?.removeEventListener('abort', onAbort);
      pool.destroy();
      throw err;
    }
  }

  if (!stopped) {
    phase = 'profiling';
    const t0 = performance.now();
    profileStartMs = t0;
    sessions.open(t0);
    busyLanes.open(t0);
    inFlight.open(t0);
    progress(true);
    const end = t0 + s.profileDurationSeconds * 1000;
    profileTimer = setTimeout(stopProfile, s.profileDurationSeconds * 1000);
    const budget: Budget = Object.assign(() => phase === 'profiling' && performance.now() < end, {
      peek: () => phase === 'profiling' && performance.now() < end,
    });
    const profileLane = async (lane: Lane): Promise<void> => {
      sessions.add(performance.now(), 1);
      try {
        await walk(lane, 'profiling', budget, true, null);
      } finally {
        sessions.add(performance.now(), -1);
      }
      await settle(lane.play);
    };
    const all = Promise.all(lanes.map(profileLane));
    // graceful end: the profile timer stops issuance; in-flight requests get the grace period
    await Promise.race([profileStopped, all.then(() => stopProfile())]);
    if (opts.afterProfile) await opts.afterProfile().catch(() => undefined);
    const graceT = setTimeout(() => graceCtl.abort(), s.profileGracePeriodSeconds * 1000);
    await all;
    clearTimeout(graceT);
  }
  clearTimeout(profileTimer);
  opts.signal?.removeEventListener('abort', onAbort);
  pool.destroy();
  phase = 'done';
  progress(true);
  if (aborted) throw new PointAbortedError('point aborted by caller', { completed });
  let blocks = 0;
  for (const c of caches.values()) blocks += c.size;
  return {
    runId,
    records,
    originWallMs,
    warmupStartMs,
    profileStartMs,
    profileEndMs,
    endMs: performance.now(),
    runCancelledReason,
    sessions,
    busyLanes,
    inFlight,
    playsStarted,
    blockCacheBlocks: blocks,
  };
}
