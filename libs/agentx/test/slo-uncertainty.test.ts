import { describe, expect, it } from 'vitest';
import { seededRng } from '@infersweep/stats';
import { pointSummary, sloUncertainty } from '../src';
import { requestRecord, summaryRecord } from '@infersweep/testkit/records-fixture';

const WINDOWS = 60;
const REQUESTS = 200;
const SIGMA = 0.5;

/** One window's requests: lognormal TTFT (median 200 ms) and E2E latency, OSL 100. */
function window(seed: number) {
  const rng = seededRng(seed);
  return Array.from({ length: REQUESTS }, (_, i) => {
    const ttft = 200 * Math.exp(SIGMA * rng.normal());
    const e2el = 5000 * Math.exp(SIGMA * rng.normal());
    return requestRecord({ id: `r${i}`, ttft_ms: ttft, e2el_ms: e2el, itl_ms: (e2el - ttft) / 99, osl: 100 });
  });
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  const k = (s.length - 1) * q;
  const f = Math.floor(k);
  return s[f]! + (k - f) * ((s[f + 1] ?? s[f]!) - s[f]!);
};
const sd = (xs: number[]) => {
  const m = xs.reduce((a, b) => a + b, 0) / xs.length;
  return Math.sqrt(xs.reduce((a, b) => a + (b - m) ** 2, 0) / (xs.length - 1));
};

describe('sloUncertainty: the bootstrap SE of a point’s latency statistics (docs/search.md)', () => {
  it('the mean reported log-SE of p50 and p99 is within ±25 % of the SD of the log statistic over windows', () => {
    const logP50: number[] = [];
    const logP99: number[] = [];
    const se50: number[] = [];
    const se99: number[] = [];
    for (let w = 0; w < WINDOWS; w++) {
      const recs = window(500 + w);
      const ttft = recs.map((r) => r.ttft_ms!);
      logP50.push(Math.log(quantile(ttft, 0.5)));
      logP99.push(Math.log(quantile(ttft, 0.99)));
      const u = sloUncertainty(recs, 8);
      se50.push(u.log_se.ttft_p50!);
      se99.push(u.log_se.ttft_p99!);
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const ratio50 = mean(se50) / sd(logP50);
    const ratio99 = mean(se99) / sd(logP99);
    console.log(`reported/actual log-SE: p50 ${ratio50.toFixed(3)}, p99 ${ratio99.toFixed(3)}`);
    expect(Math.abs(ratio50 - 1)).toBeLessThanOrEqual(0.25);
    expect(Math.abs(ratio99 - 1)).toBeLessThanOrEqual(0.25);
  });

  it('is seeded (same requests, same record), null without two values, and reaches the summary', () => {
    const recs = window(1);
    expect(sloUncertainty(recs, 8)).toEqual(sloUncertainty(recs, 8));
    const one = sloUncertainty([requestRecord()], 8);
    expect(one.log_se.ttft_p99).toBeNull();
    const u = sloUncertainty(recs, 8);
    const logSe = pointSummary(summaryRecord({ slo_uncertainty: { ...u, log_se: { ...u.log_se, itl_p50: null } } }), {
      resultPath: 'x',
      reused: false,
    }).logSe!;
    expect(logSe.ttftP99Ms).toBe(u.log_se.ttft_p99);
    expect('itlP50Ms' in logSe).toBe(false);
  });
});
