/**
 * The point's goodput and InferenceX's AgentX axis against the peers' own definitions, on the same
 * per-request records. Each reference below is a transcription of the peer's formula (not its code):
 *
 * - aiperf (github.com/ai-dynamo/aiperf at db4f6397d11ee2d4cfbb41f70b2327315163dcf0):
 *   `aiperf/metrics/types/good_request_count_metric.py` counts a record good when every `--goodput`
 *   metric is present and `value <= threshold` (`>=` only for LARGER_IS_BETTER metrics; the latencies
 *   are not), a missing value (NoMetricValue) is not good; errored records go to `error_parse_funcs`
 *   (`aiperf/post_processors/metric_record_processor.py`), so they are never good but are requests.
 *   TPOT is `inter_token_latency` (`aiperf/metrics/types/inter_token_latency_metric.py`):
 *   (request_latency − time_to_first_token) / (output_sequence_length − 1), no value when OSL < 2.
 *   Attainment = good_request_count / (request_count + error_request_count).
 * - InferenceX (github.com/SemiAnalysisAI/InferenceX at 843c6254ff69b567f772f6a5fd97675af3d04431):
 *   `utils/agentic/aggregation/request_metrics.py` `_e2e_normalized_interactivity_stats`: over the
 *   profiled, error-free records (`load_records_with_accounting`), the ratio E2EL[s] / OSL for records
 *   with both finite and > 0; `p90_e2e_norm_intvty` = 1 / percentile(ratios, 90), where
 *   `utils/agentic/aggregation/aggregation_common.py` `percentile` interpolates linearly between
 *   closest ranks (k = (n − 1)·p/100).
 */
import { describe, expect, it } from 'vitest';
import { mulberry32 } from '@infersweep/stats';
import { aiperfGoodputSlos, requestGoodput, requestMetrics, type RequestRecord } from '@infersweep/agentx';
import { requestRecord } from '@infersweep/testkit/records-fixture';

/** aiperf's good-request rule and attainment, as its code states it (see the header). */
function aiperfAttainment(
  records: readonly RequestRecord[],
  slo: { ttftMs?: number; tpotMs?: number; e2elMs?: number },
) {
  const profiled = records.filter((r) => r.phase === 'profiling');
  const valid = profiled.filter((r) => r.ok);
  const errors = profiled.length - valid.length;
  const thresholds: [string, number][] = [];
  if (slo.ttftMs !== undefined) thresholds.push(['time_to_first_token', slo.ttftMs]);
  if (slo.tpotMs !== undefined) thresholds.push(['inter_token_latency', slo.tpotMs]);
  if (slo.e2elMs !== undefined) thresholds.push(['request_latency', slo.e2elMs]);
  let good = 0;
  for (const r of valid) {
    const metrics: Record<string, number | undefined> = {
      time_to_first_token: r.ttft_ms ?? undefined,
      request_latency: r.e2el_ms ?? undefined,
      inter_token_latency:
        r.osl !== null && r.osl >= 2 && r.e2el_ms !== null && r.ttft_ms !== null
          ? (r.e2el_ms - r.ttft_ms) / (r.osl - 1)
          : undefined,
    };
    if (thresholds.every(([tag, t]) => metrics[tag] !== undefined && metrics[tag]! <= t)) good++;
  }
  return { good, total: valid.length + errors, attainment: good / (valid.length + errors) };
}

/** InferenceX's p90_e2e_norm_intvty, as its code states it (see the header). */
function inferencexP90E2eNormIntvty(records: readonly RequestRecord[]): number {
  const ratios: number[] = [];
  for (const r of records) {
    if (r.phase !== 'profiling' || !r.ok) continue;
    const e2el = r.e2el_ms;
    const osl = r.osl;
    if (e2el === null || osl === null || !Number.isFinite(e2el) || !Number.isFinite(osl) || e2el <= 0 || osl <= 0)
      continue;
    ratios.push(e2el / 1000 / osl);
  }
  const sorted = [...ratios].sort((a, b) => a - b);
  const k = (sorted.length - 1) * 0.9;
  const f = Math.floor(k);
  const p90 = f + 1 >= sorted.length ? sorted[f]! : sorted[f]! + (k - f) * (sorted[f + 1]! - sorted[f]!);
  return 1 / p90;
}

/** Seeded records around the bounds: ties, OSL 1, failures, warmup, a zero-latency and a missing TTFT. */
function records(seed: number, n: number): RequestRecord[] {
  const u = mulberry32(seed);
  const out: RequestRecord[] = [];
  for (let i = 0; i < n; i++) {
    const ttft = Math.round(50 + 400 * u());
    const osl = u() < 0.05 ? 1 : 1 + Math.floor(400 * u());
    const tpot = 5 + 30 * u();
    const e2el = i % 17 === 0 ? 2000 : ttft + tpot * (osl - 1);
    out.push(
      requestRecord({
        id: `r${i}`,
        ttft_ms: i % 23 === 0 ? 300 : i % 101 === 0 ? null : ttft,
        e2el_ms: i % 211 === 0 ? 0 : e2el,
        itl_ms: osl > 1 ? tpot : null,
        osl,
        ok: u() > 0.04,
        phase: u() < 0.05 ? 'warmup' : 'profiling',
      }),
    );
  }
  return out;
}

describe('goodput equals aiperf good_request_count / requests on the same records', () => {
  const bounds = [
    { attainment: 0.95, ttftMs: 300 },
    { attainment: 0.95, tpotMs: 20 },
    { attainment: 0.95, e2elMs: 2000 },
    { attainment: 0.9, ttftMs: 300, tpotMs: 20, e2elMs: 2000 },
  ];
  for (const [i, b] of bounds.entries())
    it(`bounds ${JSON.stringify(b)}: same good count, same total, same attainment`, () => {
      const recs = records(100 + i, 3000);
      const ours = requestGoodput(recs, b);
      const theirs = aiperfAttainment(recs, b);
      expect(ours.good_requests).toBe(theirs.good);
      expect(ours.profiled_requests).toBe(theirs.total);
      expect(ours.attainment).toBe(theirs.attainment);
      // the case is not degenerate: some requests are good, some are not
      expect(theirs.good).toBeGreaterThan(0);
      expect(theirs.good).toBeLessThan(theirs.total);
      expect(ours.ci_lower!).toBeLessThan(ours.attainment!);
      expect(ours.ci_upper!).toBeGreaterThan(ours.attainment!);
    });

  it('a latency equal to its bound is good (aiperf compares with <=)', () => {
    const r = [requestRecord({ ttft_ms: 300, e2el_ms: 1000, osl: 91 })];
    expect(requestGoodput(r, { attainment: 0.95, ttftMs: 300, e2elMs: 1000, tpotMs: 10 }).good_requests).toBe(1);
    expect(requestGoodput(r, { attainment: 0.95, ttftMs: 299.9 }).good_requests).toBe(0);
  });

  it('with a TPOT bound, a one-token answer is not good (aiperf: no ITL for OSL < 2)', () => {
    const r = [requestRecord({ osl: 1, ttft_ms: 10, e2el_ms: 10 })];
    expect(requestGoodput(r, { attainment: 0.95, tpotMs: 1000 }).good_requests).toBe(0);
    expect(requestGoodput(r, { attainment: 0.95, e2elMs: 1000 }).good_requests).toBe(1);
  });

  it('a failed request is not good and counts in the total', () => {
    const g = requestGoodput([requestRecord(), requestRecord({ ok: false })], { attainment: 0.95, e2elMs: 5000 });
    expect([g.good_requests, g.profiled_requests, g.attainment]).toEqual([1, 2, 0.5]);
  });
});

describe("InferenceX's P90 E2E-normalized interactivity", () => {
  for (const seed of [1, 2, 3])
    it(`equals InferenceX's 1 / p90(E2EL/OSL) on the same records (seed ${seed})`, () => {
      const recs = records(seed, 2000);
      const ours = requestMetrics(recs, 8).latency.e2e_norm_intvty.p90;
      expect(ours).not.toBeNull();
      expect(ours!).toBeCloseTo(inferencexP90E2eNormIntvty(recs), 9);
    });

  it('is the slow tail: one slow request in ten lowers it, unlike the p50 of 1/ITL', () => {
    const fast = Array.from({ length: 9 }, (_, i) => requestRecord({ id: `f${i}`, e2el_ms: 1000, osl: 100 }));
    const slow = requestRecord({ id: 's', e2el_ms: 10_000, osl: 100 });
    const m = requestMetrics([...fast, slow], 1).latency.e2e_norm_intvty;
    // ratios 0.01 s ×9 and 0.1 s: p90 at rank 8.1 → 0.01 + 0.1·0.09 = 0.019 s/token
    expect(m.p90).toBeCloseTo(1 / 0.019, 9);
    expect(m.p50).toBeCloseTo(100, 9);
  });
});

describe("aiperf's --goodput from the same bounds", () => {
  it('names aiperf metric tags with the bounds in ms, only those given', () => {
    expect(aiperfGoodputSlos({ ttftMs: 200, tpotMs: 15, e2elMs: 1500 })).toBe(
      'time_to_first_token:200 inter_token_latency:15 request_latency:1500',
    );
    expect(aiperfGoodputSlos({ e2elMs: 1500 })).toBe('request_latency:1500');
    expect(aiperfGoodputSlos(undefined)).toBeUndefined();
  });
});
