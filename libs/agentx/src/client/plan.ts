import { hash32, rng } from '../rng';
import type { WekaEntry, WekaLeafRequest, WekaSubagent } from '../trace/model';

/**
 * Pure replay decisions (unit-tested): where a lane starts, how long it thinks, how the whole-system idle
 * cap shifts timers, which trace a lane plays next.
 */

/**
 * Start index t* among a trace's `n` root requests, sampled in [⌊min·n⌋, min(⌊max·n⌋, n−2)] (aiperf:
 * "effective per-trace ceiling is min(int(max_ratio·n), n−2) so at least one profile turn remains").
 * Deterministic in (seed, lane, play).
 */
export function sampleStartIndex(
  n: number,
  minRatio: number,
  maxRatio: number,
  seed: number,
  lane: number,
  play: number,
): number {
  if (n <= 2) return 0;
  const lo = Math.min(Math.floor(minRatio * n), n - 2);
  const hi = Math.max(lo, Math.min(Math.floor(maxRatio * n), n - 2));
  return rng(hash32(seed, 'tstar', lane, play)).int(lo, hi);
}

/**
 * End-to-start think gap before `req`, seconds: the recorded `think_time` when present, else the
 * recorded start gap minus the previous request's recorded api_time; capped by the per-tree cap.
 */
export function thinkGapSeconds(
  req: Pick<WekaLeafRequest, 't' | 'think_time'>,
  prev: Pick<WekaLeafRequest, 't' | 'api_time'> | null,
  treeCapSeconds: number,
): number {
  let gap: number;
  if (req.think_time !== null && req.think_time !== undefined) gap = req.think_time;
  else if (prev) gap = req.t - prev.t - (prev.api_time ?? 0);
  else gap = 0;
  if (!Number.isFinite(gap) || gap < 0) gap = 0;
  return Math.min(gap, treeCapSeconds);
}

/**
 * Whole-system idle cap: when nothing is in flight, shift every pending timer earlier by the same amount
 * so the earliest fires within `capMs` of now. Returns the shift (ms, ≥ 0).
 */
export function systemIdleShift(
  nowMs: number,
  wakeTimesMs: readonly number[],
  inFlight: number,
  capMs: number,
): number {
  if (inFlight > 0 || wakeTimesMs.length === 0) return 0;
  let min = Infinity;
  for (const w of wakeTimesMs) min = Math.min(min, w);
  return Math.max(0, min - nowMs - capMs);
}

/** Deterministic shuffled order of trace indices (Fisher–Yates with a seeded PRNG). */
export function traceOrder(count: number, seed: number): number[] {
  const order = Array.from({ length: count }, (_, i) => i);
  const r = rng(hash32(seed, 'order'));
  for (let i = count - 1; i > 0; i--) {
    const j = r.int(0, i);
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order;
}

/** Theoretical prefix-cache hit tokens (pure): leading blocks already sent in this play. */
export function theoreticalHitTokens(layout: ReadonlyArray<readonly [number, number]>, seen: Set<number>): number {
  let hit = 0;
  for (const [id, n] of layout) {
    if (!seen.has(id)) break;
    hit += n;
  }
  for (const [id] of layout) seen.add(id);
  return hit;
}

/** Time-weighted average of a step function (pure accumulator). */
export class TimeWeighted {
  private area = 0;
  private lastT: number | null = null;
  private value = 0;
  private windowStart: number | null = null;
  private windowEnd: number | null = null;
  max = 0;
  set(t: number, value: number): void {
    this.accumulate(t);
    this.value = value;
    if (this.windowStart !== null && this.windowEnd === null) this.max = Math.max(this.max, value);
  }
  add(t: number, delta: number): void {
    this.set(t, this.value + delta);
  }
  get current(): number {
    return this.value;
  }
  open(t: number): void {
    this.windowStart = t;
    this.lastT = t;
    this.area = 0;
    this.max = this.value;
  }
  close(t: number): void {
    this.accumulate(t);
    this.windowEnd = t;
  }
  private accumulate(t: number): void {
    if (this.windowStart === null || this.windowEnd !== null || this.lastT === null) return;
    this.area += this.value * (t - this.lastT);
    this.lastT = t;
  }
  average(): number | null {
    if (this.windowStart === null || this.windowEnd === null || this.windowEnd <= this.windowStart) return null;
    return this.area / (this.windowEnd - this.windowStart);
  }
}

const JOIN_EPSILON_SECONDS = 1e-6;

/** A subagent's recorded end, seconds (aiperf 0.13.0 `_sa_end_seconds`): spawn + `duration_ms`, else its requests' ends. */
export function subagentEndSeconds(sa: WekaSubagent): number {
  if (sa.duration_ms !== null && sa.duration_ms !== undefined) {
    const d = sa.duration_ms / 1000;
    return sa.t + (Number.isFinite(d) && d > 0 ? d : 0);
  }
  let end = sa.t;
  for (const r of sa.requests) {
    // a child timestamp before the spawn marker is relative to it (older captures)
    const start = r.t + JOIN_EPSILON_SECONDS < sa.t ? sa.t + r.t : r.t;
    const api =
      r.api_time !== null && r.api_time !== undefined && Number.isFinite(r.api_time) ? Math.max(0, r.api_time) : 0;
    end = Math.max(end, start + api);
  }
  return end;
}

/**
 * Where each subagent of a trace is joined, as aiperf 0.13.0 replays it (hence InferenceX;
 * aiperf/dataset/loader/weka_trace.py `convert_to_conversations`): before the first later root request
 * whose recorded `t` is at or after the subagent's recorded end, or nowhere (`null`: it runs in the
 * background until the trace ends). `status` plays no part. Index i of the result belongs to entry i
 * (`undefined` for root requests).
 */
export function subagentJoins(entries: readonly WekaEntry[]): Array<number | null | undefined> {
  return entries.map((e, i) => {
    if (e.type !== 'subagent') return undefined;
    const end = subagentEndSeconds(e);
    for (let j = i + 1; j < entries.length; j++) {
      const r = entries[j]!;
      if (r.type !== 'subagent' && r.t + JOIN_EPSILON_SECONDS >= end) return j;
    }
    return null;
  });
}
