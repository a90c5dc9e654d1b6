import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import type { AgentxSettings } from '@infersweep/topology';
import { PointAbortedError } from '../errors';
import { hash32 } from '../rng';
import type { RequestPhase, RequestRecord } from '../result';
import { BlockCache, blockLayout, buildChatBody } from '../trace/prompt';
import type { WekaLeafRequest, WekaSubagent, WekaTrace } from '../trace/model';
import { EndpointPool, streamChat } from './http';
import { IdleCappedTimers } from './idle-capped-timers';
import { requestId, toRequestRecord } from './request-record';
import type { Budget, IssueInfo, Lane, Phase, Play, ReplayOptions, ReplayResult } from './replay-types';
import {
  sampleStartIndex,
  subagentJoins,
  theoreticalHitTokens,
  thinkGapSeconds,
  TimeWeighted,
  traceOrder,
} from './plan';

export { toRequestRecord, type RequestContext } from './request-record';
export type { Phase, Progress, ReplayOptions, ReplayResult } from './replay-types';

/**
 * Closed-loop AgentX replay: N lanes, each one live session tree (warmup primer at a sampled t*, then
 * the request-bounded cache-pressure stage with zero delay and 1 output token, then profiling for the
 * configured duration with end-to-start think times; a finished tree recycles the next trace from
 * turn 0 with a fresh cache-bust marker). No new requests after the profile window; in-flight ones
 * drain (bounded by the grace period) and count.
 *
 * One run = one instance: its state is the fields below; `run()` owns every resource (HTTP pool,
 * timers, abort listener) and releases them in one `finally`.
 */
export class ReplayRun {
  readonly runId = randomUUID();
  private readonly s: AgentxSettings;
  private readonly n: number;
  private readonly originWallMs = Date.now() - performance.now();
  private readonly warmupStartMs = performance.now();
  private readonly pool: EndpointPool;
  private readonly timers: IdleCappedTimers;
  private readonly records: RequestRecord[] = [];
  private readonly warnings = new Map<string, number>();
  private readonly order: number[];
  private readonly caches = new Map<string, BlockCache>();
  private readonly playsPerEndpoint: Map<string, number>;
  private readonly dp: number[] | null;
  /** Aborts every request (caller abort, warmup grace exceeded). */
  private readonly runCtl = new AbortController();
  /** Aborts the requests still in flight when the profile grace period ends. */
  private readonly graceCtl = new AbortController();
  private readonly reqSignal: AbortSignal;
  private readonly sessions = new TimeWeighted();
  private readonly busyLanes = new TimeWeighted();
  private readonly inFlight = new TimeWeighted();
  private nextTrace = 0;
  private phase: Phase = 'warmup';
  /** No new requests (profile over, run cancelled or aborted). */
  private stopped = false;
  private aborted = false;
  private runCancelledReason: string | null = null;
  private profileStartMs: number | null = null;
  private profileEndMs: number | null = null;
  private playsStarted = 0;
  private completed = 0;
  private profiledDone = 0;
  private profiledErrors = 0;
  private lastProgress = 0;
  private profileTimer: NodeJS.Timeout | undefined;
  private graceTimer: NodeJS.Timeout | undefined;
  private resolveProfileStopped: () => void = () => undefined;
  private readonly profileStopped = new Promise<void>((r) => (this.resolveProfileStopped = r));

  constructor(private readonly opts: ReplayOptions) {
    if (opts.traces.length === 0) throw new Error('replay: no traces');
    if (opts.endpoints.length === 0) throw new Error('replay: no endpoints');
    this.s = opts.settings;
    this.n = opts.concurrency;
    this.pool = new EndpointPool(Math.max(16, Math.ceil((4 * this.n) / opts.endpoints.length)));
    this.timers = new IdleCappedTimers(this.s.systemIdleGapCapSeconds * 1000);
    this.order = traceOrder(opts.traces.length, this.s.randomSeed);
    this.playsPerEndpoint = new Map(opts.endpoints.map((e) => [e, 0]));
    this.reqSignal = AbortSignal.any([this.runCtl.signal, this.graceCtl.signal]);
    setMaxListeners(0, this.reqSignal);
    this.dp =
      this.s.stickyDpRouting && opts.expectedEngines && opts.expectedEngines.length > 0 ? opts.expectedEngines : null;
  }

  async run(): Promise<ReplayResult> {
    const { signal } = this.opts;
    if (signal?.aborted) throw new PointAbortedError('point aborted before start');
    const onAbort = (): void => {
      this.aborted = true;
      this.halt();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    let ok = false;
    try {
      const lanes: Lane[] = Array.from({ length: this.n }, (_, i) => ({
        index: i,
        play: this.newPlay(i, null),
        inFlight: 0,
        quota: this.s.warmupRequestsPerLane,
      }));
      this.progress(true);
      await this.warmup(lanes);
      if (!this.stopped && this.opts.beforeProfile) {
        const verdict = await this.opts.beforeProfile();
        if (verdict) {
          this.runCancelledReason ??= verdict.cancel;
          this.stopped = true;
        }
      }
      if (!this.stopped) await this.profile(lanes);
      ok = true;
    } finally {
      // the one cleanup path: on success, error or abort
      if (!ok) this.halt();
      clearTimeout(this.profileTimer);
      clearTimeout(this.graceTimer);
      signal?.removeEventListener('abort', onAbort);
      this.pool.destroy();
    }
    this.phase = 'done';
    this.progress(true);
    if (this.aborted) throw new PointAbortedError('point aborted by caller', { completed: this.completed });
    let blocks = 0;
    for (const c of this.caches.values()) blocks += c.size;
    return {
      runId: this.runId,
      records: this.records,
      originWallMs: this.originWallMs,
      warmupStartMs: this.warmupStartMs,
      profileStartMs: this.profileStartMs,
      profileEndMs: this.profileEndMs,
      endMs: performance.now(),
      runCancelledReason: this.runCancelledReason,
      sessions: this.sessions,
      busyLanes: this.busyLanes,
      inFlight: this.inFlight,
      playsStarted: this.playsStarted,
      blockCacheBlocks: blocks,
      warnings: [...this.warnings].map(([w, k]) => (k > 1 ? `${w} (×${k})` : w)),
    };
  }

  /** Stop issuing, cut every request, wake every sleeper. */
  private halt(): void {
    this.stopped = true;
    this.runCtl.abort();
    this.timers.wakeAll(true);
  }

  // ---------------------------------------------------------------- stages

  private async warmup(lanes: Lane[]): Promise<void> {
    const warm = Promise.all(lanes.map((l) => this.warmLane(l)));
    const warmDone = await Promise.race([
      warm.then(() => true),
      new Promise<boolean>((resolve) => {
        this.graceTimer = setTimeout(() => resolve(false), this.s.warmupGracePeriodSeconds * 1000);
      }),
    ]);
    clearTimeout(this.graceTimer);
    if (!warmDone) {
      this.runCancelledReason ??= `warmup did not drain within ${this.s.warmupGracePeriodSeconds} s`;
      this.stopped = true;
      this.runCtl.abort();
      await warm;
    }
  }

  private async warmLane(lane: Lane): Promise<void> {
    const play = lane.play;
    const roots: number[] = [];
    play.trace.requests.forEach((e, i) => {
      if (e.type !== 'subagent') roots.push(i);
    });
    const tStar = sampleStartIndex(
      roots.length,
      this.s.trajectoryStartMinRatio,
      this.s.trajectoryStartMaxRatio,
      this.s.randomSeed,
      lane.index,
      play.no,
    );
    if (tStar > 0) {
      const primerIdx = roots[tStar - 1]!;
      const primer = play.trace.requests[primerIdx] as WekaLeafRequest;
      await this.issue(lane, play, primer, {
        kind: 'root',
        agentId: null,
        turn: tStar - 1,
        phase: 'warmup',
        maxTokens: 1,
        systemTokens: play.trace.system_tokens,
        marker: play.marker,
        seen: play.seen,
      });
      play.prevRoot = primer;
      play.pos = primerIdx + 1;
      play.rootTurn = tStar;
    }
    const quota: Budget = Object.assign(() => (lane.quota > 0 ? (lane.quota--, true) : false), {
      peek: () => lane.quota > 0,
    });
    this.phase = this.phase === 'warmup' ? 'cache-pressure' : this.phase;
    if (!this.stopped) await this.walk(lane, 'cache-pressure', quota, false, 1);
    await this.settle(lane.play);
  }

  private async profile(lanes: Lane[]): Promise<void> {
    this.phase = 'profiling';
    const t0 = performance.now();
    this.profileStartMs = t0;
    this.sessions.open(t0);
    this.busyLanes.open(t0);
    this.inFlight.open(t0);
    this.progress(true);
    const end = t0 + this.s.profileDurationSeconds * 1000;
    this.profileTimer = setTimeout(() => this.stopProfile(), this.s.profileDurationSeconds * 1000);
    const open = (): boolean => this.phase === 'profiling' && performance.now() < end;
    const budget: Budget = Object.assign(open, { peek: open });
    const profileLane = async (lane: Lane): Promise<void> => {
      this.sessions.add(performance.now(), 1);
      try {
        await this.walk(lane, 'profiling', budget, true, null);
      } finally {
        this.sessions.add(performance.now(), -1);
      }
      await this.settle(lane.play);
    };
    const all = Promise.all(lanes.map(profileLane));
    // graceful end: the profile timer stops issuance; in-flight requests get the grace period
    await Promise.race([this.profileStopped, all.then(() => this.stopProfile())]);
    if (this.opts.afterProfile) await this.opts.afterProfile().catch(() => undefined);
    this.graceTimer = setTimeout(() => this.graceCtl.abort(), this.s.profileGracePeriodSeconds * 1000);
    await all;
  }

  private stopProfile(): void {
    if (this.phase !== 'profiling') return;
    this.resolveProfileStopped();
    const now = performance.now();
    this.profileEndMs = now;
    this.sessions.close(now);
    this.busyLanes.close(now);
    this.inFlight.close(now);
    this.phase = 'draining';
    clearTimeout(this.profileTimer);
    this.timers.wakeAll(true);
    this.progress(true);
  }

  // ---------------------------------------------------------------- sessions

  private cacheFor(t: WekaTrace): BlockCache {
    let c = this.caches.get(t.id);
    if (!c) {
      c = new BlockCache(t.id, t.block_size);
      this.caches.set(t.id, c);
    }
    return c;
  }

  private newPlay(lane: number, prev: Play | null): Play {
    const per = this.playsPerEndpoint;
    if (prev) per.set(prev.endpoint, (per.get(prev.endpoint) ?? 1) - 1);
    const trace = this.opts.traces[this.order[this.nextTrace++ % this.order.length]!]!;
    let endpoint = this.opts.endpoints[0]!;
    for (const e of this.opts.endpoints) if ((per.get(e) ?? 0) < (per.get(endpoint) ?? 0)) endpoint = e;
    per.set(endpoint, (per.get(endpoint) ?? 0) + 1);
    const no = this.playsStarted++;
    const marker = `[rid:${this.runId.slice(0, 8)}-${hash32(this.runId, lane, no).toString(16).padStart(8, '0')}]`;
    return {
      lane,
      no,
      trace,
      cache: this.cacheFor(trace),
      marker,
      endpoint,
      dpRank: this.dp ? this.dp[hash32(marker) % this.dp.length]! : null,
      seen: new Set(),
      pos: 0,
      prevRoot: null,
      rootTurn: 0,
      pending: new Map(),
      background: [],
      joins: subagentJoins(trace.requests),
    };
  }

  private laneBusy(lane: Lane, delta: number): void {
    const before = lane.inFlight;
    lane.inFlight += delta;
    const now = performance.now();
    if (before === 0 && lane.inFlight > 0) this.busyLanes.add(now, 1);
    if (before > 0 && lane.inFlight === 0) this.busyLanes.add(now, -1);
    this.inFlight.add(now, delta);
  }

  private async issue(lane: Lane, play: Play, req: WekaLeafRequest, info: IssueInfo): Promise<RequestRecord> {
    const layout = blockLayout(req, play.trace.block_size);
    const hit = theoreticalHitTokens(layout, info.seen);
    const body = buildChatBody({
      model: this.opts.model,
      maxTokens: info.maxTokens,
      layout,
      cache: play.cache,
      systemBlocks: Math.floor(info.systemTokens / play.trace.block_size),
      marker: info.marker,
    });
    this.timers.started();
    this.laneBusy(lane, 1);
    const o = await streamChat({
      pool: this.pool,
      baseUrl: play.endpoint,
      body: body.chunks,
      bodyLength: body.length,
      headers: {
        ...this.opts.requestHeaders,
        'X-Request-Id': requestId({ play, kind: info.kind, agentId: info.agentId, turn: info.turn }),
        ...(play.dpRank !== null ? { 'X-data-parallel-rank': String(play.dpRank) } : {}),
      },
      timeoutMs: this.s.requestTimeoutSeconds * 1000,
      signal: this.reqSignal,
    });
    this.laneBusy(lane, -1);
    this.timers.ended();
    for (const w of o.warnings ?? []) {
      const key = w.replace(/: .*\(dropped\)$/, ' (dropped)');
      if (this.warnings.size < 20 || this.warnings.has(key)) this.warnings.set(key, (this.warnings.get(key) ?? 0) + 1);
    }
    const rec = toRequestRecord(o, {
      lane: lane.index,
      play: { no: play.no, marker: play.marker, traceId: play.trace.id, endpoint: play.endpoint },
      kind: info.kind,
      agentId: info.agentId,
      turn: info.turn,
      phase: info.phase,
      maxTokens: info.maxTokens,
      expected: { isl: req.in, osl: req.out },
      theoreticalHitTokens: hit,
      graceCancelled: this.graceCtl.signal.aborted && !this.aborted,
    });
    this.records.push(rec);
    this.completed++;
    this.opts.onRecord?.(rec);
    this.judge(rec, info);
    this.progress();
    return rec;
  }

  /** The live gates: the failed-request threshold while profiling, a failed root request in warmup. */
  private judge(rec: RequestRecord, info: IssueInfo): void {
    const category = rec.error_category;
    if (info.phase === 'profiling') {
      this.profiledDone++;
      if (!rec.ok && category !== 'context_overflow') this.profiledErrors++;
      if (
        !this.stopped &&
        this.phase === 'profiling' &&
        this.profiledDone >= Math.max(this.n, 10) &&
        this.profiledErrors / this.profiledDone > this.s.failedRequestThreshold
      ) {
        this.runCancelledReason = `failed-request threshold exceeded: ${this.profiledErrors}/${this.profiledDone} > ${this.s.failedRequestThreshold}`;
        this.stopProfile();
      }
    } else if (
      !rec.ok &&
      info.kind === 'root' &&
      category !== 'context_overflow' &&
      category !== 'cancelled' &&
      !this.stopped
    ) {
      this.runCancelledReason = `root warmup request failed: ${category}: ${rec.error ?? ''}`.slice(0, 400);
      this.stopped = true;
      this.timers.wakeAll(true);
    }
  }

  private async runChild(
    lane: Lane,
    play: Play,
    sub: WekaSubagent,
    p: RequestPhase,
    budget: Budget,
    think: boolean,
    maxOut: number | null,
  ): Promise<void> {
    const seen = new Set<number>();
    const marker = `${play.marker}[${sub.agent_id}]`;
    let prev: WekaLeafRequest | null = null;
    for (let i = 0; i < sub.requests.length; i++) {
      const r = sub.requests[i]!;
      if (think && i > 0) await this.timers.sleep(thinkGapSeconds(r, prev, this.s.traceIdleGapCapSeconds) * 1000);
      if (this.stopped || !budget()) return;
      await this.issue(lane, play, r, {
        kind: 'subagent',
        agentId: sub.agent_id,
        turn: i,
        phase: p,
        maxTokens: maxOut ?? r.out,
        systemTokens: sub.system_tokens,
        marker,
        seen,
      });
      prev = r;
    }
  }

  private async settle(play: Play): Promise<void> {
    await Promise.all([...play.pending.values()].flat());
    await Promise.all(play.background);
    play.pending.clear();
    play.background = [];
  }

  private async walk(
    lane: Lane,
    p: RequestPhase,
    budget: Budget,
    think: boolean,
    maxOut: number | null,
  ): Promise<void> {
    for (;;) {
      if (this.stopped) return;
      const play = lane.play;
      const entries = play.trace.requests;
      if (play.pos >= entries.length) {
        await this.settle(play);
        if (this.stopped || !budget.peek()) return;
        lane.play = this.newPlay(lane.index, play);
        continue;
      }
      const e = entries[play.pos]!;
      if (e.type === 'subagent') {
        const child = this.runChild(lane, play, e, p, budget, think, maxOut);
        const at = play.joins[play.pos];
        if (at === null || at === undefined) play.background.push(child);
        else play.pending.set(at, [...(play.pending.get(at) ?? []), child]);
        play.pos++;
        continue;
      }
      const joined = play.pending.get(play.pos);
      if (joined) {
        await Promise.all(joined);
        play.pending.delete(play.pos);
      }
      if (think && play.prevRoot)
        await this.timers.sleep(thinkGapSeconds(e, play.prevRoot, this.s.traceIdleGapCapSeconds) * 1000);
      if (this.stopped || !budget()) return;
      const rec = await this.issue(lane, play, e, {
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
  }

  // ---------------------------------------------------------------- progress

  private progress(force = false): void {
    if (!this.opts.onProgress) return;
    const now = performance.now();
    if (!force && now - this.lastProgress < 1000) return;
    this.lastProgress = now;
    const eta =
      this.phase === 'profiling' && this.profileStartMs !== null
        ? Math.max(0, (this.profileStartMs + this.s.profileDurationSeconds * 1000 - now) / 1000)
        : null;
    this.opts.onProgress({
      phase: this.phase,
      completed: this.completed,
      inFlight: this.inFlight.current,
      etaSeconds: eta,
    });
  }
}

/** Run one closed-loop AgentX replay (see ReplayRun). */
export function replay(opts: ReplayOptions): Promise<ReplayResult> {
  return new ReplayRun(opts).run();
}
