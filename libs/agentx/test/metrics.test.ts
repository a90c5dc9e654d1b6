import { describe, expect, it } from 'vitest';
import { requestRecord } from '@infersweep/testkit/records-fixture';
import fc from 'fast-check';
import { agentxSettingsSchema } from '@infersweep/topology';
import {
  accounting,
  metricCoverage,
  percentileSorted,
  reciprocalStats,
  requestMetrics,
  sampleStartIndex,
  stats,
  systemIdleShift,
  theoreticalHitTokens,
  thinkGapSeconds,
  TimeWeighted,
  traceOrder,
  validity,
  outputTokensOf,
  classifyHttpError,
  classifyStreamError,
} from '@infersweep/agentx';

describe('stats', () => {
  it('matches numpy (linear percentiles, population std)', () => {
    const s = stats([1, 2, 3, 4, 10]);
    expect(s.mean).toBe(4);
    expect(s.p50).toBe(3);
    expect(s.p75).toBe(4);
    expect(s.p90).toBeCloseTo(7.6); // numpy.percentile([1,2,3,4,10], 90)
    expect(s.p99).toBeCloseTo(9.76);
    expect(s.std).toBeCloseTo(Math.sqrt(10)); // numpy.std → 3.1623
    expect(stats([]).mean).toBeNull();
    expect(() => stats([1, NaN])).toThrow(/non-finite/);
  });
  it('percentiles are ordered and bounded (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e9, max: 1e9 }), { minLength: 1 }),
        (xs) => {
          const s = stats(xs);
          const seq = [s.min!, s.p50!, s.p75!, s.p90!, s.p95!, s.p99!, s.max!];
          for (let i = 1; i < seq.length; i++) expect(seq[i]! + 1e-6).toBeGreaterThanOrEqual(seq[i - 1]!);
        },
      ),
    );
    expect(percentileSorted([5], 37)).toBe(5);
  });
  it('interactivity is 1/ITL at the same percentile (p90 interactivity = 1/p90 ITL)', () => {
    const itl = stats([0.01, 0.02, 0.04]);
    const i = reciprocalStats(itl);
    expect(i.p90).toBeCloseTo(1 / itl.p90!);
    expect(i.min).toBeCloseTo(1 / itl.max!);
    expect(i.std).toBeNull();
  });
});

describe('replay plan (pure)', () => {
  it('t* stays in [⌊min·n⌋, min(⌊max·n⌋, n−2)] and is deterministic', () => {
    fc.assert(
      fc.property(fc.integer({ min: 3, max: 500 }), fc.nat(1000), fc.nat(64), (n, seed, lane) => {
        const k = sampleStartIndex(n, 0.25, 0.75, seed, lane, 0);
        expect(k).toBeGreaterThanOrEqual(Math.min(Math.floor(0.25 * n), n - 2));
        expect(k).toBeLessThanOrEqual(Math.max(Math.floor(0.25 * n), Math.min(Math.floor(0.75 * n), n - 2)));
        expect(sampleStartIndex(n, 0.25, 0.75, seed, lane, 0)).toBe(k);
      }),
    );
    expect(sampleStartIndex(2, 0.25, 0.75, 1, 1, 1)).toBe(0);
  });
  it('think gap: recorded think_time, else start gap minus api_time; capped; never negative', () => {
    expect(thinkGapSeconds({ t: 10, think_time: 3 }, { t: 0, api_time: 1 }, 300)).toBe(3);
    expect(thinkGapSeconds({ t: 10, think_time: null }, { t: 2, api_time: 1 }, 300)).toBe(7);
    expect(thinkGapSeconds({ t: 10, think_time: 900 }, null, 300)).toBe(300);
    expect(thinkGapSeconds({ t: 1, think_time: null }, { t: 2, api_time: 5 }, 300)).toBe(0);
  });
  it('system idle cap shifts timers only when nothing is in flight', () => {
    expect(systemIdleShift(0, [30_000, 50_000], 0, 10_000)).toBe(20_000);
    expect(systemIdleShift(0, [30_000], 1, 10_000)).toBe(0);
    expect(systemIdleShift(0, [5_000], 0, 10_000)).toBe(0);
    expect(systemIdleShift(0, [], 0, 10_000)).toBe(0);
  });
  it('trace order is a deterministic permutation', () => {
    const o = traceOrder(50, 42);
    expect([...o].sort((a, b) => a - b)).toEqual([...Array(50).keys()]);
    expect(traceOrder(50, 42)).toEqual(o);
    expect(traceOrder(50, 43)).not.toEqual(o);
  });
  it('theoretical hit tokens count only the leading already-seen blocks', () => {
    const seen = new Set<number>();
    expect(
      theoreticalHitTokens(
        [
          [1, 64],
          [2, 64],
          [3, 10],
        ],
        seen,
      ),
    ).toBe(0);
    expect(
      theoreticalHitTokens(
        [
          [1, 64],
          [2, 64],
          [4, 64],
          [3, 10],
        ],
        seen,
      ),
    ).toBe(128);
  });
  it('time-weighted average integrates a step function over the window only', () => {
    const t = new TimeWeighted();
    t.set(0, 5);
    t.open(10);
    t.set(20, 3);
    t.close(30);
    t.set(40, 100);
    expect(t.average()).toBe(4);
    expect(t.max).toBe(5);
  });
  it('classifies vLLM context overflow', () => {
    expect(classifyHttpError(400, `{"message":"This model's maximum context length is 1024 tokens"}`)).toBe(
      'context_overflow',
    );
    expect(classifyHttpError(503, '')).toBe('server_error');
  });
  it('classifies an error sent inside the stream by its code, else stream_error', () => {
    const full = 'Failed to enqueue request, waiting requests queue is full';
    expect(classifyStreamError({ message: full, type: 'TooManyRequests', code: 429 })).toEqual({
      kind: 'rate_limit',
      message: full,
    });
    expect(
      classifyStreamError({ message: "This model's maximum context length is 1024 tokens", code: '400' }).kind,
    ).toBe('context_overflow');
    expect(classifyStreamError({ message: 'boom', code: 500 }).kind).toBe('server_error');
    expect(classifyStreamError({ message: 'no code' })).toEqual({ kind: 'stream_error', message: 'no code' });
    expect(classifyStreamError('plain text')).toEqual({ kind: 'stream_error', message: 'plain text' });
    expect(classifyStreamError({ code: 200 }).kind).toBe('stream_error');
  });
});

describe('aggregation and validity', () => {
  const records = [
    requestRecord({ phase: 'warmup' }),
    requestRecord({ start_ms: 0, end_ms: 1000 }),
    requestRecord({ start_ms: 1000, end_ms: 2000, ttft_ms: 300, e2el_ms: 1000 }),
    requestRecord({
      start_ms: 500,
      end_ms: 600,
      ok: false,
      error_category: 'server_error',
      ttft_ms: null,
      e2el_ms: null,
      itl_ms: null,
      isl: null,
      osl: null,
    }),
    requestRecord({
      start_ms: 600,
      end_ms: 700,
      ok: false,
      error_category: 'context_overflow',
      ttft_ms: null,
      e2el_ms: null,
      itl_ms: null,
      isl: null,
      osl: null,
    }),
  ];
  it('accounting excludes warmup and errors; categories counted', () => {
    expect(accounting(records)).toEqual({
      records_total: 5,
      records_profiled: 4,
      records_dropped_total: 3,
      records_warmup_dropped: 1,
      records_error_dropped: 2,
      context_overflow_count: 1,
      grace_cancelled: 0,
      error_categories: { server_error: 1, context_overflow: 1 },
    });
  });
  it('metrics: seconds, throughput over first start → last end, per GPU, e2e-normalized interactivity', () => {
    const m = requestMetrics(records, 4);
    expect(m.latency.ttft.mean).toBeCloseTo(0.2);
    expect(m.throughput.duration_seconds).toBe(2);
    expect(m.throughput.output.tokens_per_second).toBe(91);
    expect(m.throughput.total.tokens_per_second).toBe((2000 + 182) / 2);
    expect(m.throughput.per_gpu.total_tput_tps).toBe((2000 + 182) / 2 / 4);
    expect(m.latency.e2e_norm_intvty.p50).toBeCloseTo(91);
    expect(m.cache.theoretical_cache_hit_rate).toBe(0.5);
  });
  it('coverage = last TTFT/ITL observation / window (a streaming request observes ITL until its end)', () => {
    expect(metricCoverage(records, 0, 2)).toBe(1);
    expect(metricCoverage(records, 0, 4)).toBe(0.5);
    const noItl = records.map((r) => ({ ...r, itl_ms: null }));
    expect(metricCoverage(noItl, 0, 2)).toBeCloseTo(0.65);
    expect(metricCoverage([], 0, 2)).toBe(0);
  });
  /** What validity() reads for a clean point under these settings. */
  const cleanPoint = (settings: ReturnType<typeof agentxSettingsSchema.parse>) => ({
    settings,
    accounting: accounting(records.slice(0, 3)),
    successes: 2,
    coverage: 1,
    clientSaturatedReason: null,
    concurrencyHeld: 1,
    runCancelledReason: null,
    serverMetricsMissing: [],
    idleRankMessages: [],
  });
  it('gates: each failure adds its reason; a clean point is valid', () => {
    const base = cleanPoint(agentxSettingsSchema.parse({ profileDurationSeconds: 900 }));
    expect(validity(base)).toEqual({ valid: true, reasons: [] });
    const bad = validity({
      ...base,
      settings: {
        ...agentxSettingsSchema.parse({ profileDurationSeconds: 60, nonCanonical: true }),
        nonCanonical: false,
      },
      accounting: accounting(records),
      successes: 0,
      coverage: 0.5,
      clientSaturatedReason: 'cpu',
      concurrencyHeld: 0.9,
      runCancelledReason: 'x',
      serverMetricsMissing: ['kv'],
      idleRankMessages: ['idle DP rank 1'],
    });
    expect(bad.valid).toBe(false);
    expect(bad.reasons.map((r) => r.split(':')[0])).toEqual([
      'run_cancelled',
      'unsafe_override',
      'no_successful_requests',
      'error_rate_exceeded',
      'context_overflow_rate_exceeded',
      'insufficient_profile_metric_coverage',
      'concurrency_not_held',
      'client_saturated',
      'server_metrics_missing',
      'idle_dp_rank',
    ]);
  });
  it('a "success" with zero output tokens is invalid (zero_output_tokens); output, or an uncounted one, is not', () => {
    const base = cleanPoint(agentxSettingsSchema.parse({ profileDurationSeconds: 900 }));
    expect(validity({ ...base, outputTokens: 0 })).toEqual({
      valid: false,
      reasons: ['zero_output_tokens: 2 successful requests returned 0 output tokens'],
    });
    expect(validity({ ...base, outputTokens: 120 })).toEqual({ valid: true, reasons: [] });
    expect(validity({ ...base, outputTokens: null })).toEqual({ valid: true, reasons: [] });
    const rec = (phase: 'warmup' | 'profiling', ok: boolean, osl: number | null) => ({ phase, ok, osl });
    expect(outputTokensOf([rec('profiling', true, 0), rec('profiling', true, 0), rec('warmup', true, 50)])).toBe(0);
    expect(outputTokensOf([rec('profiling', true, 7), rec('profiling', false, 9), rec('profiling', true, null)])).toBe(
      7,
    );
    expect(outputTokensOf([rec('profiling', false, 5)])).toBeNull();
  });
  it('a short run explicitly marked non-canonical is not invalidated for its duration', () => {
    const v = validity(cleanPoint(agentxSettingsSchema.parse({ profileDurationSeconds: 60, nonCanonical: true })));
    expect(v).toEqual({ valid: true, reasons: [] });
  });
  it('settings: a short run must be marked non-canonical', () => {
    expect(agentxSettingsSchema.safeParse({ profileDurationSeconds: 60 }).success).toBe(false);
    expect(agentxSettingsSchema.parse({}).systemIdleGapCapSeconds).toBe(10);
  });
});
