import { bootstrapDistribution, goodput, seededRng, type GoodputBounds } from '@infersweep/stats';
import type { GoodputSlo } from '@infersweep/topology';
import type { PointGoodputRecord, RequestMetrics, RequestRecord, SloUncertaintyRecord } from '../result';
import { percentileSorted, reciprocalStats, stats } from './stats';

export interface Accounting {
  records_total: number;
  records_profiled: number;
  records_dropped_total: number;
  records_warmup_dropped: number;
  records_error_dropped: number;
  context_overflow_count: number;
  grace_cancelled: number;
  error_categories: Record<string, number>;
}

/** Request accounting (pure): warmup and errored records are excluded from every metric. */
export function accounting(records: readonly RequestRecord[]): Accounting {
  const profiled = records.filter((r) => r.phase === 'profiling');
  const warmup = records.length - profiled.length;
  const errors = profiled.filter((r) => !r.ok);
  const cats: Record<string, number> = {};
  for (const r of errors) {
    const c = r.error_category ?? 'unknown';
    cats[c] = (cats[c] ?? 0) + 1;
  }
  return {
    records_total: records.length,
    records_profiled: profiled.length,
    records_dropped_total: warmup + errors.length,
    records_warmup_dropped: warmup,
    records_error_dropped: errors.length,
    context_overflow_count: cats['context_overflow'] ?? 0,
    grace_cancelled: cats['grace_cancelled'] ?? 0,
    error_categories: cats,
  };
}

/** The per-request values the latency statistics are taken over (successful profiled requests), seconds. */
function latencyValues(records: readonly RequestRecord[]) {
  const ok = records.filter((r) => r.phase === 'profiling' && r.ok);
  const s = (ms: number | null): number | null => (ms === null ? null : ms / 1000);
  const vals = (f: (r: RequestRecord) => number | null): number[] =>
    ok.map(f).filter((v): v is number => v !== null && Number.isFinite(v));
  return {
    ok,
    vals,
    ttft: vals((r) => s(r.ttft_ms)),
    e2el: vals((r) => s(r.e2el_ms)),
    itl: vals((r) => (r.osl !== null && r.osl > 1 ? s(r.itl_ms) : null)),
    // InferenceX request_metrics.py `_e2e_normalized_interactivity_stats`: E2EL and OSL both > 0
    e2eNorm: vals((r) =>
      r.osl !== null && r.osl > 0 && r.e2el_ms !== null && r.e2el_ms > 0 ? r.e2el_ms / 1000 / r.osl : null,
    ),
  };
}

/** Bootstrap resamples of a point's requests behind `sloUncertainty`. */
export const SLO_BOOTSTRAP_RESAMPLES = 400;

/**
 * The search's per-point uncertainty (pure, seeded by the concurrency: the same requests give the
 * same record): for each latency statistic an SLO bound reads, the SD of its log over
 * SLO_BOOTSTRAP_RESAMPLES percentile-bootstrap resamples of the successful profiled requests
 * (libs/stats `bootstrapDistribution`). The P90 E2E-normalized interactivity's is p90(E2EL/OSL)'s
 * (the log of a reciprocal has the same SD). Null: fewer than 2 values or a non-positive replicate.
 */
export function sloUncertainty(records: readonly RequestRecord[], seed: number): SloUncertaintyRecord {
  const v = latencyValues(records);
  const rng = seededRng(seed);
  const logSe = (xs: readonly number[], pct: number): number | null => {
    if (xs.length < 2) return null;
    // a typed array sorts numerically without a comparator: the bootstrap's cost is its sorts
    const sorted = new Float64Array(xs.length);
    const dist = bootstrapDistribution(
      xs,
      (r) => {
        sorted.set(r);
        sorted.sort();
        return percentileSorted(sorted as unknown as number[], pct)!;
      },
      rng,
      SLO_BOOTSTRAP_RESAMPLES,
    );
    if (dist.some((d) => !(d > 0))) return null;
    const logs = dist.map(Math.log);
    const mean = logs.reduce((a, b) => a + b, 0) / logs.length;
    return Math.sqrt(logs.reduce((a, b) => a + (b - mean) ** 2, 0) / (logs.length - 1));
  };
  return {
    method: 'percentile-bootstrap',
    resamples: SLO_BOOTSTRAP_RESAMPLES,
    seed,
    log_se: {
      ttft_p50: logSe(v.ttft, 50),
      ttft_p99: logSe(v.ttft, 99),
      itl_p50: logSe(v.itl, 50),
      itl_p99: logSe(v.itl, 99),
      e2el_p50: logSe(v.e2el, 50),
      e2el_p99: logSe(v.e2el, 99),
      e2e_norm_intvty_p90: logSe(v.e2eNorm, 90),
    },
  };
}

/** Per-point request metrics (pure) over successful profiled requests; seconds, tokens/s. */
export function requestMetrics(records: readonly RequestRecord[], gpuCount: number): RequestMetrics {
  const v = latencyValues(records);
  const { ok, vals } = v;
  const ttft = stats(v.ttft);
  const e2el = stats(v.e2el);
  const itl = stats(v.itl);
  const e2eNorm = stats(v.e2eNorm);
  let duration: number | null = null;
  let qps = stats([]);
  if (ok.length > 0) {
    let first = Infinity;
    let last = -Infinity;
    for (const r of ok) {
      first = Math.min(first, r.start_ms);
      last = Math.max(last, r.end_ms);
    }
    duration = (last - first) / 1000;
    const windows = Math.max(1, Math.ceil(duration));
    const counts = new Array<number>(windows).fill(0);
    for (const r of ok) counts[Math.min(windows - 1, Math.floor((r.end_ms - first) / 1000))]!++;
    qps = stats(counts);
  }
  const sum = (f: (r: RequestRecord) => number | null): number => ok.reduce((a, r) => a + (f(r) ?? 0), 0);
  const inTok = sum((r) => r.isl);
  const outTok = sum((r) => r.osl);
  const rate = (x: number): number | null => (duration !== null && duration > 0 ? x / duration : null);
  const per = (x: number | null): number | null => (x === null ? null : x / gpuCount);
  const expIn = sum((r) => r.expected_isl);
  return {
    latency: { ttft, e2el, itl, tpot: itl, intvty: reciprocalStats(itl), e2e_norm_intvty: reciprocalStats(e2eNorm) },
    qps,
    tokens: {
      input: stats(vals((r) => r.isl)),
      output_actual: stats(vals((r) => r.osl)),
      output_expected: stats(vals((r) => r.expected_osl)),
    },
    throughput: {
      input: { tokens_per_second: rate(inTok) },
      output: { tokens_per_second: rate(outTok) },
      total: { tokens_per_second: rate(inTok + outTok) },
      duration_seconds: duration,
      per_gpu: {
        total_tput_tps: per(rate(inTok + outTok)),
        output_tput_tps: per(rate(outTok)),
        input_tput_tps: per(rate(inTok)),
      },
    },
    cache: { theoretical_cache_hit_rate: expIn > 0 ? sum((r) => r.theoretical_cache_hit_tokens) / expIn : null },
  };
}

/**
 * Goodput attainment of a point (pure; libs/stats `goodput`, DistServe's definition as aiperf's
 * `good_request_count` applies it): over every profiled request, a request is good when it succeeded
 * and its TTFT, TPOT and E2E latency are each ≤ its bound. TPOT is aiperf's inter_token_latency,
 * (E2E − TTFT)/(OSL − 1), defined for OSL ≥ 2 only: with a TPOT bound a shorter answer is not good
 * (aiperf: no metric value, not good). A failed request is not good and counts in the total
 * (aiperf: good_request_count / (request_count + error_request_count)).
 */
export function requestGoodput(records: readonly RequestRecord[], slo: GoodputSlo): PointGoodputRecord {
  const bounds: GoodputBounds = {
    ...(slo.ttftMs === undefined ? {} : { ttftMs: slo.ttftMs }),
    ...(slo.tpotMs === undefined ? {} : { tpotMs: slo.tpotMs }),
    ...(slo.e2elMs === undefined ? {} : { e2elMs: slo.e2elMs }),
  };
  const opt = (v: number | null | undefined) => (v === null || v === undefined ? undefined : v);
  const requests = records
    .filter((r) => r.phase === 'profiling')
    .map((r) => ({
      ok: r.ok,
      ttftMs: opt(r.ttft_ms),
      tpotMs:
        r.osl !== null && r.osl > 1 && r.e2el_ms !== null && r.ttft_ms !== null
          ? (r.e2el_ms - r.ttft_ms) / (r.osl - 1)
          : undefined,
      e2elMs: opt(r.e2el_ms),
    }));
  const base = {
    attainment_target: slo.attainment,
    bounds: { ttft_ms: slo.ttftMs ?? null, tpot_ms: slo.tpotMs ?? null, e2el_ms: slo.e2elMs ?? null },
  };
  if (requests.length === 0)
    return {
      ...base,
      good_requests: 0,
      profiled_requests: 0,
      attainment: null,
      ci_lower: null,
      ci_upper: null,
      ci_level: 0.95,
    };
  const g = goodput(requests, bounds);
  return {
    ...base,
    good_requests: g.successes,
    profiled_requests: g.trials,
    attainment: g.estimate,
    ci_lower: g.lower,
    ci_upper: g.upper,
    ci_level: g.level,
  };
}

/**
 * Fraction of the profiling window covered by TTFT/ITL observations: (last observation − window start)
 * / window length, using successful profiled requests (aiperf `insufficient_profile_metric_coverage`).
 * A streaming request observes ITL until its last token, so its end (not only its first token) counts:
 * a long request still streaming when the window closes keeps the window covered.
 */
export function metricCoverage(
  records: readonly RequestRecord[],
  profileStartMs: number,
  profileSeconds: number,
): number {
  let last = -Infinity;
  for (const r of records)
    if (r.phase === 'profiling' && r.ok && r.ttft_ms !== null)
      last = Math.max(last, r.start_ms + r.ttft_ms, r.itl_ms !== null ? r.end_ms : -Infinity);
  if (!Number.isFinite(last)) return 0;
  return Math.min(1, Math.max(0, (last - profileStartMs) / (profileSeconds * 1000)));
}
