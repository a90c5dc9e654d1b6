import type { RequestRecord } from '../result';
import { percentileSorted } from '../metrics/stats';
import type { IxRequestAccounting, IxRequestMetrics, IxStats } from './inferencex-schema';

/**
 * InferenceX's request-side aggregation (pure), recomputed from a point's per-request records with
 * InferenceX's semantics (InferenceX utils/agentic/aggregation/request_metrics.py and
 * aggregation_common.py @ 843c6254f), which differ from infersweep's own record in places:
 * - kept records: not warmup and not errored; `records_profiled` counts only those, while
 *   `records_error_dropped` and `error_categories` count errors of every phase;
 * - latencies: only finite values > 0, ms → s; `tpot` = `itl`;
 * - interactivity: mean/pXX = 1 / the matching latency statistic, std = population std of the
 *   per-request reciprocals;
 * - qps: completions counted in 1-s windows [t, t + 1) from the first completion while t + 1 ≤ the last
 *   completion (complete windows only); fewer than 2 completions ⇒ `{}`;
 * - throughput: Σ tokens / (last end − first start) of the kept records; per GPU over the deployment's GPUs.
 */

function ixStats(values: readonly number[]): IxStats {
  if (values.length === 0) return {};
  const sorted = [...values].sort((a, b) => a - b);
  const mean = sorted.reduce((a, v) => a + v, 0) / sorted.length;
  return {
    mean,
    p50: percentileSorted(sorted, 50)!,
    p75: percentileSorted(sorted, 75)!,
    p90: percentileSorted(sorted, 90)!,
    p95: percentileSorted(sorted, 95)!,
    std: pstdev(sorted, mean),
  };
}

function pstdev(values: readonly number[], mean = values.reduce((a, v) => a + v, 0) / values.length): number {
  if (values.length < 2) return 0;
  return Math.sqrt(values.reduce((a, v) => a + (v - mean) * (v - mean), 0) / values.length);
}

/** 1 / the latency statistic at each of mean, p50…p95; std over the per-request reciprocals. */
function interactivity(latency: IxStats, perRequest: readonly number[]): IxStats {
  const out: IxStats = {};
  for (const k of ['mean', 'p50', 'p75', 'p90', 'p95'] as const) {
    const v = latency[k];
    if (v !== undefined && v > 0) out[k] = 1 / v;
  }
  const inv = perRequest.filter((v) => v > 0).map((v) => 1 / v);
  if (inv.length > 0) out.std = pstdev(inv);
  return out;
}

const secondsPositive = (ms: readonly (number | null | undefined)[]): number[] =>
  ms.filter((v): v is number => v !== null && v !== undefined && Number.isFinite(v) && v > 0).map((v) => v / 1000);

const kept = (r: RequestRecord): boolean => r.phase === 'profiling' && r.ok;

export function ixRequestAccounting(requests: readonly RequestRecord[]): IxRequestAccounting {
  const categories: Record<string, number> = {};
  let warmup = 0;
  let errors = 0;
  for (const r of requests) {
    if (r.phase !== 'profiling') warmup++;
    if (!r.ok) {
      errors++;
      // aiperf rows: InferenceX's own category of aiperf's error; the own client: its category
      const c = r.error_type ?? r.error_category ?? 'unknown';
      categories[c] = (categories[c] ?? 0) + 1;
    }
  }
  const profiled = requests.filter(kept).length;
  return {
    records_total: requests.length,
    records_profiled: profiled,
    records_dropped_total: requests.length - profiled,
    records_warmup_dropped: warmup,
    records_error_dropped: errors,
    error_categories: categories,
  };
}

function qps(ok: readonly RequestRecord[]): IxRequestMetrics['qps'] {
  const ends = ok.map((r) => r.end_ms / 1000).sort((a, b) => a - b);
  if (ends.length < 2) return {};
  const first = ends[0]!;
  const last = ends[ends.length - 1]!;
  if (last - first <= 0) return {};
  const windows: number[] = [];
  let i = 0;
  for (let t = first; t + 1 <= last; t += 1) {
    while (i < ends.length && ends[i]! < t) i++;
    let j = i;
    while (j < ends.length && ends[j]! < t + 1) j++;
    windows.push(j - i);
  }
  if (windows.length === 0) return { window_seconds: 1, samples: 0, mean: ends.length / (last - first) };
  return { window_seconds: 1, samples: windows.length, ...ixStats(windows) };
}

/**
 * `request_metrics` as InferenceX computes it. `expectedOutput`: whether `expected_osl` is the trace's
 * expected output length (the own client) — aiperf records carry no such value, and InferenceX then
 * writes `{}` unless its trace metadata cache is present.
 */
export function ixRequestMetrics(
  requests: readonly RequestRecord[],
  opts: { gpus: number; theoreticalCacheHitRate: number | null; expectedOutput: boolean },
): IxRequestMetrics {
  const ok = requests.filter(kept);
  const itls = secondsPositive(ok.map((r) => r.itl_ms));
  const fullItls = secondsPositive(ok.map((r) => r.full_response_itl_ms));
  const itl = ixStats(itls);
  const fullItl = ixStats(fullItls);
  const e2elPerOsl = ok
    .filter((r) => r.e2el_ms !== null && r.osl !== null && Number.isFinite(r.e2el_ms) && r.e2el_ms > 0 && r.osl > 0)
    .map((r) => r.e2el_ms! / 1000 / r.osl!);
  const ints = (f: (r: RequestRecord) => number | null): number[] => ok.map(f).filter((v): v is number => v !== null);
  const input = ints((r) => r.isl);
  const output = ints((r) => r.osl);
  let throughput: IxRequestMetrics['throughput'] | null = null;
  if (ok.length > 0) {
    const start = Math.min(...ok.map((r) => r.start_ms));
    const end = Math.max(...ok.map((r) => r.end_ms));
    const duration = (end - start) / 1000;
    if (duration > 0) {
      const tin = input.reduce((a, v) => a + v, 0) / duration;
      const tout = output.reduce((a, v) => a + v, 0) / duration;
      throughput = {
        input: { tokens_per_second: tin },
        output: { tokens_per_second: tout },
        total: { tokens_per_second: tin + tout },
        duration_seconds: duration,
        per_gpu:
          opts.gpus > 0
            ? {
                total_tput_tps: (tin + tout) / opts.gpus,
                output_tput_tps: tout / opts.gpus,
                input_tput_tps: tin / opts.gpus,
              }
            : {},
      };
    }
  }
  if (throughput === null)
    throw new Error('InferenceX export: no successful profiled request with a positive duration');
  return {
    qps: qps(ok),
    latency: {
      ttft: ixStats(secondsPositive(ok.map((r) => r.ttft_ms))),
      e2el: ixStats(secondsPositive(ok.map((r) => r.e2el_ms))),
      itl,
      tpot: itl,
      intvty: interactivity(itl, itls),
      e2e_norm_intvty: interactivity(ixStats(e2elPerOsl), e2elPerOsl),
      full_response_itl: fullItl,
      full_response_intvty: interactivity(fullItl, fullItls),
    },
    tokens: {
      input: ixStats(input),
      output_actual: ixStats(output),
      output_expected: opts.expectedOutput ? ixStats(ok.map((r) => r.expected_osl)) : {},
    },
    throughput,
    cache: { theoretical_cache_hit_rate: opts.theoreticalCacheHitRate },
  };
}
