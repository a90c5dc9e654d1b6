/**
 * The registered targets of docs/history.md ("Pre-registered targets"), seeded, through the history's
 * own verdict (`evaluateRun` on stored points, the walk over each series' whole history included).
 * Per commit: H1 and H2 on 100 nights, H3 on 50, H4 on 30 series; `npx tsx bench/history-nights.ts`
 * runs 1000 nights per row (and the σ × ρ table) for the figures in docs/history.md.
 */
import { describe, expect, it } from 'vitest';
import { NO_METRICS, evaluateRun, type HistoryPoint } from '@infersweep/history';
import {
  HISTORY_NIGHT,
  SCHEDULED_NIGHT,
  SIM_SETTINGS,
  driftOutcomes,
  historyNights,
  scheduledNights,
} from '@infersweep/testkit/nights-fixture';
import { noisySeries, series } from '@infersweep/testkit/series-fixture';

describe('nightly verdicts through the history on synthetic nights (80 series, seeded)', { timeout: 120_000 }, () => {
  it('H1: σ = 3 % iid: at most 1 false alarm per 100 nights', () => {
    const r = historyNights(100, HISTORY_NIGHT, 101);
    console.log(`H1 (100 nights) ${JSON.stringify(r)}`);
    expect(r.falseAlarms / 100).toBeLessThanOrEqual(0.01);
  });

  it('H2: σ = 3 %, AR(1) ρ = 0.5: at most 5 false alarms per 100 nights', () => {
    const r = historyNights(100, { ...HISTORY_NIGHT, rho: 0.5 }, 102);
    console.log(`H2 (100 nights) ${JSON.stringify(r)}`);
    expect(r.falseAlarms / 100).toBeLessThanOrEqual(0.05);
  });

  it("H3: σ = 3 %: a −10 % step on an orientation's 5 points in the window is flagged on at least 90 % of nights", () => {
    const r = historyNights(50, { ...HISTORY_NIGHT, step: 0.9 }, 103);
    console.log(`H3 (50 nights) ${JSON.stringify(r)}`);
    expect(r.stepped / 50).toBeGreaterThanOrEqual(0.9);
  });

  it('H4: a −0.5 %/night drift over 30 nights: one finding of the whole-series pass, at most one nightly count', () => {
    const r = driftOutcomes(30, 104);
    console.log(`H4 (30 series) ${JSON.stringify(r)}`);
    expect(r.oneFindingInDrift / 30).toBeGreaterThanOrEqual(0.9);
    expect(r.nightlyAtMostOnce / 30).toBeGreaterThanOrEqual(0.9);
  });
});

describe('a scheduled night of 3 orientations × 27 series as one family (H9–H12, seeded)', { timeout: 120_000 }, () => {
  it('H9, H12: σ = 3 % iid: at most 1 false alarm per 100 nights; BH rejects on at most 10 of 100 nights before the gate', () => {
    const r = scheduledNights(100, SCHEDULED_NIGHT, 109);
    console.log(`H9/H12 (100 nights) ${JSON.stringify(r)}`);
    expect(r.night.falseAlarms / 100).toBeLessThanOrEqual(0.01);
    expect(r.night.nightsRejected).toBeLessThanOrEqual(10);
  });

  it('H10: σ = 3 %, AR(1) ρ = 0.5: at most 5 false alarms per 100 nights', () => {
    const r = scheduledNights(100, { ...SCHEDULED_NIGHT, rho: 0.5 }, 110);
    console.log(`H10 (100 nights) ${JSON.stringify(r)}`);
    expect(r.night.falseAlarms / 100).toBeLessThanOrEqual(0.05);
  });

  it("H11: a −10 % step on one orientation's throughput is flagged on ≥ 90 % of nights, within 3 points of one family per orientation", () => {
    const r = scheduledNights(50, { ...SCHEDULED_NIGHT, step: 0.9 }, 111);
    console.log(`H11 (50 nights) ${JSON.stringify(r)}`);
    expect(r.night.stepped / 50).toBeGreaterThanOrEqual(0.9);
    expect(Math.abs(r.night.stepped - r.perOrientation.stepped) / 50).toBeLessThanOrEqual(0.03);
  });
});

describe('findings of their own kind (H5, H6) and the non-blinding walk through the verdict (H7)', () => {
  const base = series(noisySeries(7, { baselineRuns: 20, stepRuns: 0, step: 0, sigma: 0.02 })).map(
    (p): HistoryPoint => ({ ...p, requests: 200, metrics: { ...p.metrics, errorRate: 0 } }),
  );
  const newest = (over: Partial<HistoryPoint>): HistoryPoint => ({
    ...base.at(-1)!,
    runId: 'r20',
    time: '2026-01-21T02:00:00.000Z',
    ...over,
  });

  it('H5: a point valid in 20 runs and invalid in the newest is unmeasured, a finding', () => {
    const p = newest({ valid: false, invalidReasons: ['client saturated'] });
    const v = evaluateRun('r20', [p], () => [...base, p], SIM_SETTINGS);
    expect([v.unmeasured, v.points[0]!.status]).toEqual([1, 'unmeasured']);
    expect(v.findings).toEqual([expect.objectContaining({ kind: 'unmeasured', concurrency: p.key.concurrency })]);
  });

  it('H6: the error rate 0 % in 20 runs × 200 requests, then 16 of 200, is a regression with p < 1e-10', () => {
    const p = newest({ metrics: { ...base.at(-1)!.metrics, errorRate: 0.08 } });
    const v = evaluateRun('r20', [p], () => [...base, p], { metrics: ['errorRate'], secondaryMetrics: [] });
    expect(v.regressions).toBe(1);
    const f = v.findings[0]!;
    expect([f.kind, f.metric, f.effect]).toEqual(['regression', 'errorRate', 0.08]);
    expect(f.pValue).toBeLessThan(1e-10);
  });

  it('H7: a −10 % step at run 25 (σ = 2 %) is counted once; later nights are pending, then the new level is the baseline', () => {
    const pts = series(noisySeries(11, { baselineRuns: 25, stepRuns: 25, step: -0.1, sigma: 0.02 }));
    const nights = pts.map((p, t) => evaluateRun(p.runId, [p], () => pts.slice(0, t + 1), SIM_SETTINGS));
    const counted = nights.map((v) => v.regressions);
    const first = counted.indexOf(1);
    console.log(`H7 counted at ${counted.flatMap((c, i) => (c ? [i] : [])).join(', ')}`);
    expect(counted.reduce((a, b) => a + b, 0)).toBe(1);
    expect([25, 26]).toContain(first);
    const tput = (t: number) => nights[t]!.points[0]!.metrics.find((m) => m.metric === 'throughputPerGpu')!;
    // the nights after the flag are still tested (no blind night) and hold the change as pending
    expect(tput(first + 1)).toMatchObject({ status: 'regression', pending: true });
    for (let t = first + 1; t < 50; t++) expect(tput(t).pValue, `run ${t}`).not.toBeNull();
    // confirmed: the last nights compare with the new level only
    expect(Number(tput(49).baselineRunIds[0]!.slice(1))).toBeGreaterThanOrEqual(25);
    expect(tput(49).status).toBe('unchanged');
    expect(NO_METRICS.throughputPerGpu).toBeNull();
  });
});
