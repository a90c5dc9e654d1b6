import { describe, expect, it } from 'vitest';
import { pointResultSchema } from '@infersweep/agentx';
import { engineRequestsOf, rowFromRecord } from '../src/report/records';
import { renderReport } from '../src/report/html';
import { pointRecord, resultsOf } from './fixtures/sweep-results';

const window = (requests: number[]) =>
  Object.fromEntries(
    requests.map((r, i) => [
      String(i),
      {
        requests: r,
        prompt_tokens: 10 * r,
        generation_tokens: 5 * r,
        prefix_hits: 0,
        prefix_queries: 10 * r,
        kv_usage_pct_max: 1.5,
      },
    ]),
  );
const check = (phase: 'readiness' | 'post-warmup', perEngine: Record<string, number>, applicable = true) => ({
  phase,
  applicable,
  ok: !Object.values(perEngine).includes(0),
  expected: applicable ? Object.keys(perEngine).map(Number) : null,
  present: [],
  missing: [],
  perEngine,
  message: null,
});
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a record's nested blocks, edited in place
type Loose = Record<string, any>;
/** The real record fixture with this point's server numbers and idle-rank checks. */
function record(per: Record<string, unknown>, checks: unknown[], cache = 0.42, kv = 3.25) {
  const r = pointRecord('s', 'balanced', { concurrency: 2, valid: true, tputPerGpu: 10, interactivity: 5 }) as Loose;
  r.server_metrics = {
    ...r.server_metrics,
    per_engine: per,
    cache: { ...r.server_metrics.cache, overall_cache_hit_rate: cache },
    kv_cache: { ...r.server_metrics.kv_cache, gpu_usage_pct: kv },
  };
  r.idle_rank_checks = checks;
  return pointResultSchema.parse(r);
}

describe('per-engine request counts in the report', () => {
  it('reads the profile counts, the prefix hit rate and the KV peak, and shows them in the point table', () => {
    const rec = record(window([7, 6]), [
      check('readiness', { '0': 1, '1': 1 }),
      check('post-warmup', { '0': 2, '1': 2 }),
    ]);
    const r = rowFromRecord(rec, null);
    expect(r.engineRequests).toEqual({ phase: 'profiling', perEngine: { '0': 7, '1': 6 } });
    expect(r.prefixCacheHitRate).toBe(0.42);
    expect(r.kvUsagePeakPct).toBe(3.25);
    const html = renderReport({
      sweeps: [resultsOf([r])],
      outDir: '/r',
    });
    expect(html).toContain('requests per engine</th>');
    expect(html).toContain('<td class="engines">0: 7 · 1: 6</td>');
  });

  it('a point ended at the idle-rank check shows the warmup counts, the idle rank flagged at 0', () => {
    const rec = record({}, [check('readiness', { '0': 1 }), check('post-warmup', { '0': 3, '1': 0 })]);
    expect(engineRequestsOf(rec)).toEqual({ phase: 'warmup', perEngine: { '0': 3, '1': 0 } });
  });

  it('no engine label (simulator): null, not zeros', () => {
    expect(engineRequestsOf(record({}, [check('readiness', {}, false), check('post-warmup', {}, false)]))).toBeNull();
  });
});
