import { describe, expect, it } from 'vitest';
import { seededRng } from '@infersweep/stats';
import { finishPoint, nextPointOrSearch, startPoint, type SearchResult, type SweepSearch } from '../src';
import { progress } from '@infersweep/testkit/progress-fixture';

const search: SweepSearch = {
  goal: ['frontier'],
  minConcurrency: 1,
  maxConcurrency: 128,
  maxAddedPoints: 20,
  resolution: { relative: 0.1 },
  pointGpuHours: 0,
};

/** Run a frontier search on a throughput curve with multiplicative noise; the knee and the added points' reasons. */
function runKnee(throughput: (c: number) => number, seed: number): { knee: SearchResult['knee']; reasons: string[] } {
  const rng = seededRng(seed);
  const p = progress([1]);
  for (let pt = nextPointOrSearch(p, search), n = 0; pt; pt = nextPointOrSearch(p, search), n++) {
    if (n > 50) throw new Error('the search did not end');
    startPoint(pt, 'job', 't');
    const c = pt.concurrency;
    finishPoint(
      pt,
      {
        concurrency: c,
        valid: true,
        reasons: [],
        resultPath: `c${c}`,
        reused: false,
        totalThroughputPerGpu: throughput(c) * Math.exp(0.02 * rng.normal()),
      },
      't',
    );
  }
  return { knee: p.search!.knee, reasons: p.points.flatMap((x) => (x.searchReason ? [x.searchReason] : [])) };
}

describe('frontier: a knee that means something (docs/search.md "The knee")', () => {
  it('a KV-capacity cliff at c=32: found, with its candidate set, and at most two refinements', () => {
    // throughput grows with c until the KV cache holds no more sequences, then stays flat
    for (let seed = 1; seed <= 20; seed++) {
      const { knee, reasons } = runKnee((c) => 100 * Math.min(c, 32), seed);
      expect(knee).toMatchObject({ concurrency: 32, status: 'found' });
      expect(knee!.candidates).toContain(32);
      expect(knee!.ci!.lower! <= 32 && 32 <= knee!.ci!.upper!).toBe(true);
      expect(reasons.filter((r) => r.startsWith('frontier')).length).toBeLessThanOrEqual(2);
    }
  });

  it('a smooth saturating curve: "no knee" and no point added for it, whatever the noise', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const { knee, reasons } = runKnee((c) => (1000 * c) / (c + 16), seed);
      expect(knee).toMatchObject({ concurrency: null, status: 'found', candidates: [] });
      expect(knee!.text).toMatch(/^no knee/);
      expect(reasons.filter((r) => r.startsWith('frontier'))).toEqual([]);
    }
  });
});
