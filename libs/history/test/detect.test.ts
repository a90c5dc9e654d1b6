/**
 * Change detection along one series (a family of one unit: the per-point level q): steps of known size
 * under known noise, the rate without a change, a single outlier, the non-blinding walk, invalid
 * points, segments and attribution. The rates are printed (seeded: the same on every run). The
 * family's figures are in ./nightly.sim.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { analyzeSeries, seriesId, type DetectionSettingsInput } from '@infersweep/history';
import { verdictLabel } from '@infersweep/sweep';
import { KEY, noisySeries, series } from '@infersweep/testkit/series-fixture';

const SERIES = 200;
const SIGMA = 0.02;
const settings: DetectionSettingsInput = { q: 0.05, minRelativeChange: 0.05, minBaselineRuns: 5, baselineRuns: 20 };

/** The newest run's status over `SERIES` seeded series (a change found at it, or at the run before). */
function outcomes(o: { baselineRuns: number; stepRuns: number; step: number; sigma: number }, s = settings): string[] {
  return Array.from({ length: SERIES }, (_, seed) => {
    const pts = series(noisySeries(seed + 1, o));
    const a = analyzeSeries(pts, 'throughputPerGpu', s);
    const recent = new Set(pts.slice(-2).map((p) => p.runId));
    return a.changes.find((c) => recent.has(c.detectedAtRunId))?.direction ?? a.evaluations.at(-1)!.status;
  });
}
const rate = (xs: string[], status: string) => xs.filter((x) => x === status).length / xs.length;

describe('change detection along one series (200 seeded series each, noise σ = 2 %)', { timeout: 60_000 }, () => {
  it('detects a 10 % drop in the last two runs in at least 95 % of series, a 20 % drop in all', () => {
    const r10 = rate(outcomes({ baselineRuns: 20, stepRuns: 2, step: -0.1, sigma: SIGMA }), 'regression');
    const r20 = rate(outcomes({ baselineRuns: 20, stepRuns: 2, step: -0.2, sigma: SIGMA }), 'regression');
    const r5 = rate(outcomes({ baselineRuns: 20, stepRuns: 2, step: -0.05, sigma: SIGMA }), 'regression');
    const r10short = rate(outcomes({ baselineRuns: 5, stepRuns: 2, step: -0.1, sigma: SIGMA }), 'regression');
    console.log(
      `detection rate (k = 2, q 0.05, gate 5 %): step -5 %: ${r5}, -10 %: ${r10}, -20 %: ${r20}; -10 % on 5 baseline runs: ${r10short}`,
    );
    expect(r10).toBeGreaterThanOrEqual(0.95);
    expect(r20).toBe(1);
    expect(r10short).toBeGreaterThanOrEqual(0.8);
    expect(r5).toBeLessThan(r10);
  });

  it('flags an unchanged series rarely with the gate, and at most at the level q without it', () => {
    const o = { baselineRuns: 22, stepRuns: 0, step: 0, sigma: SIGMA };
    const gated = outcomes(o, settings);
    const ungated = outcomes(o, { ...settings, minRelativeChange: 0, gateSigmas: 0 });
    const fpGated = rate(gated, 'regression') + rate(gated, 'improvement');
    const fpUngated = rate(ungated, 'regression');
    console.log(`no change: ${fpGated} flagged with the gate; ${fpUngated} regressions without it (q 0.05)`);
    expect(fpGated).toBeLessThanOrEqual(0.01);
    // 200 draws at 0.05, over two runs (the newest and the one before): at most 2 × 0.05 + 3 sd
    expect(fpUngated).toBeLessThanOrEqual(0.1 + 3 * Math.sqrt((0.1 * 0.9) / SERIES));
  });

  it('a single 40 % outlier night is at most one transient flag: it leaves the baselines, the next night is clean', () => {
    let laterFlags = 0;
    let inBaseline = 0;
    for (let seed = 1; seed <= 50; seed++) {
      const specs = noisySeries(seed, { baselineRuns: 25, stepRuns: 0, step: 0, sigma: 0.01 });
      specs[12] = { throughput: specs[12]!.throughput * 0.6 };
      const a = analyzeSeries(series(specs), 'throughputPerGpu', settings);
      laterFlags += a.changes.filter((c) => !c.windowRunIds.includes('r12')).length;
      inBaseline += a.evaluations.filter((e) => e.baselineRunIds.includes('r12')).length;
    }
    expect(laterFlags).toBe(0);
    expect(inBaseline).toBe(0);
  });
});

describe('a flag does not blind the series (docs/history.md)', () => {
  const flat = (n: number, v = 1000) =>
    Array.from({ length: n }, (_, i) => ({ throughput: v * (1 + 0.005 * Math.sin(i * 1.7)) }));

  it('a persisting drop is reported once, pending while it holds, confirmed after 5 tested runs, with no untested night', () => {
    const a = analyzeSeries(series([...flat(8), ...flat(10, 850)]), 'throughputPerGpu', settings);
    // found on its first night (the window r07, r08), placed at r08
    expect(a.changes.map((c) => [c.firstRunId, c.detectedAtRunId])).toEqual([['r08', 'r08']]);
    const byRun = new Map(a.evaluations.map((e) => [e.runId, e]));
    for (const r of ['r09', 'r10', 'r11', 'r12', 'r13'])
      expect(byRun.get(r)).toMatchObject({ status: 'regression', pending: true });
    // confirmed at r13 (5 runs after r08): from r14 on the new level is the baseline, which starts at the change
    for (const r of ['r14', 'r15', 'r16', 'r17']) expect(byRun.get(r)!.status).toBe('unchanged');
    expect(a.evaluations.at(-1)!.baselineRunIds[0]).toBe('r08');
    expect(a.evaluations.slice(7).every((e) => e.pValue !== null)).toBe(true);
  });

  it('the night after a flag is compared with the baseline before it: a return to the old level ends the change', () => {
    const a = analyzeSeries(series([...flat(8), ...flat(2, 850), ...flat(4)]), 'throughputPerGpu', settings);
    expect(a.changes.map((c) => c.firstRunId)).toEqual(['r08']);
    const last = a.evaluations.at(-1)!;
    expect(last.status).toBe('unchanged');
    expect(last.baselineRunIds).not.toContain('r08');
    expect(last.baselineRunIds).not.toContain('r09');
    expect(last.baselineRunIds).toContain('r00');
  });
});

describe('honest inputs and attribution', () => {
  const flat = (n: number, v = 1000) =>
    Array.from({ length: n }, (_, i) => ({ throughput: v * (1 + 0.005 * Math.sin(i * 1.7)) }));

  it('keeps invalid points out of every baseline, however far off their numbers are', () => {
    const specs = [
      ...flat(8),
      { throughput: 10, valid: false },
      ...flat(1),
      { throughput: 10, valid: false },
      ...flat(2),
    ];
    const a = analyzeSeries(series(specs), 'throughputPerGpu', settings);
    expect(a.changes).toEqual([]);
    const last = a.evaluations.at(-1)!;
    expect(last.status).toBe('unchanged');
    expect(last.baselineRunIds).not.toContain('r08');
    expect(last.baselineRunIds).not.toContain('r10');
    expect(a.evaluations.filter((e) => e.status === 'invalid').map((e) => e.runId)).toEqual(['r08', 'r10']);
  });

  it('attributes a drop to the image that changed with it, and names the runs it compared', () => {
    const specs = [
      ...flat(8),
      ...flat(2, 850).map((s) => ({ ...s, context: { image: 'vllm/vllm-openai:v0.12.0', engineVersion: '0.12.0' } })),
    ];
    const a = analyzeSeries(series(specs), 'throughputPerGpu', settings);
    expect(a.changes).toHaveLength(1);
    const c = a.changes[0]!;
    expect(c).toMatchObject({
      direction: 'regression',
      firstRunId: 'r08',
      previousRunId: 'r07',
      detectedAtRunId: 'r08',
    });
    expect(c.attribution).toEqual([
      { field: 'image', before: 'vllm/vllm-openai:v0.11.0', after: 'vllm/vllm-openai:v0.12.0' },
      { field: 'engineVersion', before: '0.11.0', after: '0.12.0' },
    ]);
    expect(c.baselineRunIds).toEqual(['r00', 'r01', 'r02', 'r03', 'r04', 'r05', 'r06']);
    expect(c.windowRunIds).toEqual(['r07', 'r08']);
    expect(c.relativeChange).toBeCloseTo(-0.15, 2);
  });

  it('says nothing changed in the context when nothing did', () => {
    const a = analyzeSeries(series([...flat(8), ...flat(2, 850)]), 'throughputPerGpu', settings);
    expect(a.changes.map((c) => c.attribution)).toEqual([[]]);
  });

  it('starts a new segment on an image change when configured so: no comparison across it', () => {
    const specs = [...flat(8), ...flat(2, 850).map((s) => ({ ...s, context: { image: 'vllm/vllm-openai:v0.12.0' } }))];
    const a = analyzeSeries(series(specs), 'throughputPerGpu', { ...settings, segmentOn: ['image'] });
    expect(a.changes).toEqual([]);
    expect(a.evaluations.at(-1)!.status).toBe('insufficient-history');
  });

  it("scales the gate by the newest run's replicate CI when the point was replicated", () => {
    const pts = series([...flat(8), ...flat(2, 920)]);
    expect(analyzeSeries(pts, 'throughputPerGpu', settings).evaluations.at(-1)!.status).toBe('regression');
    // 5 allocations with a 95 % CI of ±12 %: SE = 0.12 / t(0.975, 4) ≈ 4.3 %, so the gate is 2 × 4.3 % > 8 %
    const last = pts.at(-1)!;
    const v = last.metrics.throughputPerGpu!;
    pts[pts.length - 1] = { ...last, n: 5, ci: { throughputPerGpu: { lower: v * 0.88, upper: v * 1.12 } } };
    const ev = analyzeSeries(pts, 'throughputPerGpu', settings).evaluations.at(-1)!;
    expect(ev.gate).toBeCloseTo((2 * 0.12) / 2.7764451, 3);
    expect(ev.status).toBe('unchanged');
  });

  it('reads lower as better for latencies: a TTFT rise is a regression', () => {
    const specs = [
      ...flat(8).map((s) => ({ ...s, ttftP50Ms: 200 })),
      ...flat(2).map((s) => ({ ...s, ttftP50Ms: 260 })),
    ];
    specs.forEach((s, i) => (s.ttftP50Ms += i % 3));
    const a = analyzeSeries(series(specs), 'ttftP50Ms', settings);
    expect(a.changes.map((c) => [c.direction, c.firstRunId])).toEqual([['regression', 'r08']]);
  });
});

describe('the verdict label (InfersweepRegression)', () => {
  it('is none only when nothing was found, and names each kind of finding', () => {
    expect(verdictLabel({})).toBe('none');
    expect(verdictLabel({ regressions: 0, unmeasured: 0, failed: 0 })).toBe('none');
    expect(verdictLabel({ regressions: 2 })).toBe('2');
    expect(verdictLabel({ unmeasured: 3 })).toBe('unmeasured:3');
    expect(verdictLabel({ regressions: 2, unmeasured: 3, failed: 1 })).toBe('2,unmeasured:3,failed:1');
  });
});

describe('series ids', () => {
  it('hold the cluster, the client and the workload, and escape `:` and `%` so that two keys never share an id', () => {
    const k = { ...KEY, concurrency: 4 };
    const a = seriesId({ ...k, config: 'c', model: 'a:b' });
    const b = seriesId({ ...k, config: 'c:a', model: 'b' });
    expect(a).not.toBe(b);
    expect([a, b]).toEqual([
      'c:tep8:a%3Ab:h200x8:alpha:infersweep:public/weka:c4',
      'c%3Aa:tep8:b:h200x8:alpha:infersweep:public/weka:c4',
    ]);
    expect(seriesId({ ...k, config: '50%', model: 'm%3Ab' })).toBe(
      '50%25:tep8:m%253Ab:h200x8:alpha:infersweep:public/weka:c4',
    );
    expect(seriesId({ ...k, client: 'aiperf' })).not.toBe(seriesId(k));
    expect(seriesId({ ...k, workload: 'file/trace.jsonl@1' })).not.toBe(seriesId(k));
    expect(seriesId({ ...k, cluster: 'beta' })).not.toBe(seriesId(k));
  });
});
