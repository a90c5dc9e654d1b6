import { describe, expect, it } from 'vitest';
import { searchPointBound } from '@infersweep/core';
import {
  finishPoint,
  goodputViolations,
  nextPointOrSearch,
  sloViolations,
  startPoint,
  type PointState,
  type PointSummary,
  type SweepSearch,
} from '../src';
import { progress } from '@infersweep/testkit/progress-fixture';

const summary = (over: Partial<PointSummary> = {}): PointSummary => ({
  concurrency: 8,
  valid: true,
  reasons: [],
  resultPath: 'r',
  reused: false,
  ...over,
});
const gp = (good: number, total: number) => ({ good, total, attainment: good / total, lower: 0, upper: 1 });
const slo = { goodput: { attainment: 0.95, ttftMs: 300, tpotMs: 20 } };

describe('goodput as an SLO constraint', () => {
  it('a point meets it when good / profiled requests ≥ the attainment (a tie meets it)', () => {
    expect(goodputViolations(slo, summary({ goodput: gp(95, 100) }))).toEqual([]);
    expect(goodputViolations(slo, summary({ goodput: gp(94, 100) }))).toEqual(['goodput 94.0 % (94/100 good) < 95 %']);
  });

  it('a point without a goodput measurement fails it, loudly', () => {
    expect(goodputViolations(slo, summary())).toEqual(['goodput not measured']);
  });

  it("InferenceX's axis as a floor: P90 E2E-normalized interactivity below it fails", () => {
    const floor = { minE2eNormInteractivityP90: 30 };
    expect(goodputViolations(floor, summary({ e2eNormInteractivityP90: 30 }))).toEqual([]);
    expect(goodputViolations(floor, summary({ e2eNormInteractivityP90: 29.5 }))).toEqual([
      'P90 E2E-normalized interactivity 29.5 tok/s/user < 30',
    ]);
    expect(goodputViolations(floor, summary())).toEqual(['P90 E2E-normalized interactivity not measured']);
  });

  it('sloViolations adds them to the percentile bounds; an invalid point still fails as invalid', () => {
    const both = { ttftMs: { p99: 500 }, ...slo };
    expect(
      sloViolations(both, {
        concurrency: 8,
        status: 'done',
        attempts: 1,
        summary: summary({ ttftP99Ms: 600, goodput: gp(90, 100) }),
      }),
    ).toEqual(['TTFT p99 600.0 ms > 500 ms', 'goodput 90.0 % (90/100 good) < 95 %']);
    expect(
      sloViolations(slo, {
        concurrency: 8,
        status: 'invalid',
        attempts: 1,
        summary: summary({ valid: false, goodput: gp(100, 100) }),
      })[0],
    ).toMatch(/^invalid/);
  });

  it('a goodput-limit search finds the largest concurrency whose attainment holds, within the bound', () => {
    const s: SweepSearch = {
      goal: ['slo-limit'],
      slo: { goodput: { attainment: 0.95, e2elMs: 2000 } },
      minConcurrency: 1,
      maxConcurrency: 128,
      maxAddedPoints: 30,
      resolution: { absolute: 1 },
      pointGpuHours: 1,
    };
    for (const limit of [1, 7, 40, 127]) {
      const p = progress([4]);
      let pt: PointState | undefined;
      while ((pt = nextPointOrSearch(p, s))) {
        startPoint(pt, 'job', 't');
        // 200 requests a point: 96 % good up to the limit, 94 % above it
        const good = pt.concurrency <= limit ? 192 : 188;
        finishPoint(pt, summary({ concurrency: pt.concurrency, goodput: gp(good, 200) }), 't');
      }
      expect(p.search?.limit, `limit ${limit}`).toMatchObject({ concurrency: limit, status: 'found' });
      expect(p.points.filter((x) => x.origin === 'search').length).toBeLessThanOrEqual(searchPointBound(s));
    }
  });
});
