/**
 * Change detection on synthetic series of known shape: detection rate of steps of known size under
 * known noise, false-positive rate without a change (against alpha), a single outlier, invalid
 * points, segments and attribution. The rates are printed (seeded: the same on every run).
 */
import { describe, expect, it } from 'vitest';
import { analyzeSeries, seriesId, shiftTest, type DetectionSettingsInput } from '@infersweep/history';
import { verdictLabel } from '@infersweep/sweep';
import { noisySeries, series } from './series-fixture';

const SERIES = 200;
const SIGMA = 0.02;
const settings: DetectionSettingsInput = {
  alpha: 0.05,
  minRelativeChange: 0.05,
  minBaselineRuns: 5,
  baselineRuns: 20,
  confirmRuns: 2,
};

/**
 * For `SERIES` seeded series: the direction of a change detected at one of the last `lastRuns` runs
 * (a step is found when the last two runs show it, or a run early when noise puts the run before it
 * past the gate too), else the newest run's status.
 */
function outcomes(
  o: { baselineRuns: number; stepRuns: number; step: number; sigma: number },
  s = settings,
  lastRuns = 2,
): string[] {
  return Array.from({ length: SERIES }, (_, seed) => {
    const pts = series(noisySeries(seed + 1, o));
    const a = analyzeSeries(pts, 'throughputPerGpu', s);
    const recent = new Set(pts.slice(-lastRuns).map((p) => p.runId));
    return a.changes.find((c) => recent.has(c.detectedAtRunId))?.direction ?? a.evaluations.at(-1)!.status;
  });
}
const rate = (xs: string[], status: string) => xs.filter((x) => x === status).length / xs.length;

// CPU-bound (hundreds of series, each test enumerating hundreds of arrangements): minutes on a loaded 2-core host
describe('change detection on synthetic series (200 seeded series each, noise σ = 2 %)', { timeout: 120_000 }, () => {
  it('detects a persistent 10 % drop in at least 95 % of series, a 20 % drop in all', () => {
    const r10 = rate(outcomes({ baselineRuns: 20, stepRuns: 2, step: -0.1, sigma: SIGMA }), 'regression');
    const r20 = rate(outcomes({ baselineRuns: 20, stepRuns: 2, step: -0.2, sigma: SIGMA }), 'regression');
    const r5 = rate(outcomes({ baselineRuns: 20, stepRuns: 2, step: -0.05, sigma: SIGMA }), 'regression');
    const r10short = rate(outcomes({ baselineRuns: 5, stepRuns: 2, step: -0.1, sigma: SIGMA }), 'regression');
    console.log(
      `detection rate (k=2, alpha 0.05, min change 5 %): step -5 %: ${r5}, -10 %: ${r10}, -20 %: ${r20}; -10 % on 5 baseline runs: ${r10short}`,
    );
    expect(r10).toBeGreaterThanOrEqual(0.95);
    expect(r20).toBe(1);
    expect(r10short).toBeGreaterThanOrEqual(0.9);
    // a step the size of the magnitude gate is found about as often as both runs clear it
    expect(r5).toBeLessThan(r10);
  });

  it('flags an unchanged series at most at the rate alpha allows, with the magnitude gate and without', () => {
    const o = { baselineRuns: 22, stepRuns: 0, step: 0, sigma: SIGMA };
    const gated = outcomes(o, settings, 1);
    const ungated = outcomes(o, { ...settings, minRelativeChange: 0 }, 1);
    const fpGated = rate(gated, 'regression') + rate(gated, 'improvement');
    const fpUngatedRegression = rate(ungated, 'regression');
    console.log(
      `false-positive rate, no change: ${fpGated} with the 5 % gate; ${fpUngatedRegression} per direction with no gate (alpha 0.05)`,
    );
    expect(fpGated).toBe(0);
    // 200 draws at alpha 0.05: mean 10, sd 3.1; more than 0.05 + 3 sd would mean a miscalibrated test
    expect(fpUngatedRegression).toBeLessThanOrEqual(0.05 + 3 * Math.sqrt((0.05 * 0.95) / SERIES));
    expect(fpUngatedRegression).toBeGreaterThan(0);
  });

  it('never flags a single outlier, last run or mid-series, when its neighbours stay within the magnitude gate', () => {
    const outlierChanges = (sigma: number) => {
      let flagged = 0;
      for (let seed = 1; seed <= SERIES; seed++) {
        const specs = noisySeries(seed, { baselineRuns: 25, stepRuns: 0, step: 0, sigma });
        specs[12] = { throughput: specs[12]!.throughput * 0.6 };
        specs[24] = { throughput: specs[24]!.throughput * 0.6 };
        const a = analyzeSeries(series(specs), 'throughputPerGpu', settings);
        flagged += a.changes.filter((c) => c.windowRunIds.includes('r12') || c.windowRunIds.includes('r24')).length;
      }
      return flagged;
    };
    const at1 = outlierChanges(0.01);
    // at σ = 2 % the 5 % gate is 2.5 σ: a neighbour that far off by chance makes a two-run shift with the outlier
    const at2 = outlierChanges(SIGMA);
    console.log(`single 40 % outliers flagged: ${at1} of ${2 * SERIES} at σ = 1 %, ${at2} of ${2 * SERIES} at σ = 2 %`);
    expect(at1).toBe(0);
    expect(at2 / (2 * SERIES)).toBeLessThanOrEqual(0.02);
  });

  it('counts the same at every run of a long unchanged series: changes per tested run stay under alpha', () => {
    let tested = 0;
    let changes = 0;
    for (let seed = 1; seed <= 50; seed++) {
      const a = analyzeSeries(
        series(noisySeries(seed, { baselineRuns: 60, stepRuns: 0, step: 0, sigma: SIGMA })),
        'throughputPerGpu',
        {
          ...settings,
          minRelativeChange: 0,
        },
      );
      tested += a.evaluations.filter((e) => e.pValue !== null).length;
      changes += a.changes.length;
    }
    console.log(`walk along 50 unchanged series of 60 runs, no magnitude gate: ${changes} changes in ${tested} tests`);
    expect(changes / tested).toBeLessThanOrEqual(0.1);
  });

  it('gives the exact permutation p-value: two runs below five baseline runs are 1 of C(7, 2) = 21 arrangements', () => {
    const t = shiftTest([100, 101, 99, 100, 100.5], [80, 81], -1, { permutations: 5000, seed: 1 });
    expect(t.exact).toBe(true);
    expect(t.arrangements).toBe(21);
    expect(t.pValue).toBeCloseTo(1 / 21, 12);
  });

  it('draws permutations from the fixed seed when there are too many arrangements: the same seed gives the same p-value', () => {
    const base = noisySeries(3, { baselineRuns: 30, stepRuns: 0, step: 0, sigma: SIGMA }).map((s) => s.throughput);
    const a = shiftTest(base, [990, 985, 992], -1, { permutations: 500, seed: 7 });
    const b = shiftTest(base, [990, 985, 992], -1, { permutations: 500, seed: 7 });
    const c = shiftTest(base, [990, 985, 992], -1, { permutations: 500, seed: 8 });
    expect(a.exact).toBe(false);
    expect(a.pValue).toBe(b.pValue);
    expect(c.pValue).not.toBe(a.pValue);
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
      detectedAtRunId: 'r09',
    });
    expect(c.attribution).toEqual([
      { field: 'image', before: 'vllm/vllm-openai:v0.11.0', after: 'vllm/vllm-openai:v0.12.0' },
      { field: 'engineVersion', before: '0.11.0', after: '0.12.0' },
    ]);
    expect(c.baselineRunIds).toEqual(['r00', 'r01', 'r02', 'r03', 'r04', 'r05', 'r06', 'r07']);
    expect(c.windowRunIds).toEqual(['r08', 'r09']);
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

  it('after a change, compares the next runs with the new level only (a persisting drop is reported once)', () => {
    const a = analyzeSeries(series([...flat(8), ...flat(10, 850)]), 'throughputPerGpu', settings);
    expect(a.changes.map((c) => c.detectedAtRunId)).toEqual(['r09']);
    expect(a.evaluations.at(-1)!.status).toBe('unchanged');
    expect(a.evaluations.at(-1)!.baselineRunIds[0]).toBe('r08');
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
  it('escape `:` and `%` in a key, so that two keys never share an id; plain keys keep theirs', () => {
    const k = { orientation: 'tep8', gpu: 'h200x8', concurrency: 4 };
    const a = seriesId({ ...k, config: 'c', model: 'a:b' });
    const b = seriesId({ ...k, config: 'c:a', model: 'b' });
    expect(a).not.toBe(b);
    expect([a, b]).toEqual(['c:tep8:a%3Ab:h200x8:c4', 'c%3Aa:tep8:b:h200x8:c4']);
    expect(seriesId({ ...k, config: 'kimik3', model: 'kimi-k3' })).toBe('kimik3:tep8:kimi-k3:h200x8:c4');
    expect(seriesId({ ...k, config: '50%', model: 'm%3Ab' })).toBe('50%25:tep8:m%253Ab:h200x8:c4');
  });
});
