import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  emptyLedger,
  ledgerClosed,
  ledgerGranted,
  ledgerLine,
  ledgerPointEnded,
  ledgerStart,
  ledgerStop,
  ledgerTotal,
  sweepSpend,
} from '../src';

const S = 1000;

describe('the GPU-hour ledger', () => {
  it('books one allocation with a failed attempt: every held second once, the remainder idle', () => {
    const l = emptyLedger();
    ledgerGranted(l, 'j1', 8, 30); // waited 30 s for 8 GPUs
    ledgerStart(l, 'j1', 'modelLoad', 2 * S);
    ledgerStop(l, 'j1', 12 * S); // loaded in 10 s
    ledgerStart(l, 'j1', 'point', 13 * S);
    ledgerPointEnded(l, 'j1', 4, 23 * S, { ok: false }); // 10 s lost
    ledgerStart(l, 'j1', 'point', 24 * S);
    ledgerPointEnded(l, 'j1', 4, 44 * S, { ok: true, drainSeconds: 5, warmupSeconds: 3 }); // 20 s
    ledgerClosed(l, 'j1', 50, 50 * S); // held 50 s
    expect(l.sweep).toEqual({
      imageImport: 0,
      modelLoad: 80,
      warmup: 24,
      measurement: 96,
      drain: 40,
      failedAttempts: 80,
      idle: 80, // 50 - 10 - 10 - 20 = 10 s × 8
    });
    expect(ledgerTotal(l.sweep)).toBe(400);
    expect(l.heldGpuSeconds).toBe(400);
    expect(l.points['4']).toEqual({
      imageImport: 0,
      modelLoad: 0,
      warmup: 24,
      measurement: 96,
      drain: 40,
      failedAttempts: 80,
      idle: 0,
    });
    expect(l.queueWaitSeconds).toBe(30);
    expect(l.queueWaitGpuSeconds).toBe(240);
    expect(l.open).toEqual({});
    expect(ledgerLine(l)).toBe(
      '0.11 GPU-h held: modelLoad 20 %, warmup 6 %, measurement 24 %, drain 10 %, failedAttempts 20 %, idle 20 %; queue wait 30 s',
    );
  });

  it('a point still running when its allocation is lost is a failed attempt', () => {
    const l = emptyLedger();
    ledgerGranted(l, 'j1', 2, 0);
    ledgerStart(l, 'j1', 'point', 0);
    ledgerClosed(l, 'j1', 10, 7 * S);
    expect(l.sweep).toMatchObject({ failedAttempts: 14, idle: 6 });
  });

  it('drain and warm-up never exceed the point time they are part of', () => {
    const l = emptyLedger();
    ledgerGranted(l, 'j1', 1, 0);
    ledgerStart(l, 'j1', 'point', 0);
    ledgerPointEnded(l, 'j1', 1, 4 * S, { ok: true, drainSeconds: 3, warmupSeconds: 9 });
    expect(l.points['1']).toMatchObject({ drain: 3, warmup: 1, measurement: 0 });
  });

  it('for any sequence of steps, the categories sum to held time × GPUs and none is negative (seeded)', () => {
    const step = fc.record({
      kind: fc.constantFrom('imageImport', 'modelLoad', 'point-ok', 'point-failed', 'gap'),
      seconds: fc.integer({ min: 0, max: 600 }),
      drain: fc.integer({ min: 0, max: 100 }),
      warmup: fc.integer({ min: 0, max: 100 }),
    });
    const alloc = fc.record({
      gpus: fc.integer({ min: 1, max: 64 }),
      steps: fc.array(step, { maxLength: 12 }),
      slack: fc.integer({ min: 0, max: 300 }),
    });
    fc.assert(
      fc.property(fc.array(alloc, { minLength: 1, maxLength: 4 }), (allocs) => {
        const l = emptyLedger();
        let t = 0;
        let expected = 0;
        allocs.forEach((a, i) => {
          const id = `j${i}`;
          const granted = t;
          ledgerGranted(l, id, a.gpus, 5);
          for (const s of a.steps) {
            if (s.kind === 'gap') t += s.seconds * S;
            else if (s.kind === 'point-ok' || s.kind === 'point-failed') {
              ledgerStart(l, id, 'point', t);
              t += s.seconds * S;
              ledgerPointEnded(
                l,
                id,
                8,
                t,
                s.kind === 'point-ok' ? { ok: true, drainSeconds: s.drain, warmupSeconds: s.warmup } : { ok: false },
              );
            } else {
              ledgerStart(l, id, s.kind, t);
              t += s.seconds * S;
              ledgerStop(l, id, t);
            }
          }
          t += a.slack * S;
          ledgerClosed(l, id, (t - granted) / S, t);
          expected += ((t - granted) / S) * a.gpus;
        });
        expect(Math.abs(ledgerTotal(l.sweep) - expected)).toBeLessThan(1e-6 * Math.max(1, expected));
        expect(l.heldGpuSeconds).toBeCloseTo(expected, 6);
        for (const v of Object.values(l.sweep)) expect(v).toBeGreaterThanOrEqual(0);
      }),
      { seed: 34, numRuns: 300 },
    );
  });

  it('timed steps beyond the held time (a clock step) are scaled into it: the sum stays the held time', () => {
    const l = emptyLedger();
    ledgerGranted(l, 'j1', 4, 0);
    ledgerStart(l, 'j1', 'modelLoad', 0);
    ledgerStop(l, 'j1', 20 * S);
    ledgerClosed(l, 'j1', 10, 20 * S);
    expect(l.sweep).toMatchObject({ modelLoad: 40, idle: 0 });
    expect(ledgerTotal(l.sweep)).toBe(40);
  });
});

describe("a sweep's GPU time in a snapshot (sweepSpend)", () => {
  // one allocation of 8 GPUs held 50 s: 10 s model load, a 10 s failed point, a 20 s good point
  const held = () => {
    const l = emptyLedger();
    ledgerGranted(l, 'j1', 8, 0);
    ledgerStart(l, 'j1', 'modelLoad', 0);
    ledgerStop(l, 'j1', 10 * S);
    ledgerStart(l, 'j1', 'point', 10 * S);
    ledgerPointEnded(l, 'j1', 4, 20 * S, { ok: false });
    ledgerStart(l, 'j1', 'point', 20 * S);
    ledgerPointEnded(l, 'j1', 4, 40 * S, { ok: true });
    ledgerClosed(l, 'j1', 50, 50 * S);
    return l;
  };

  it('a finished sweep: all it held, of it failed its failed attempts', () => {
    expect(sweepSpend(held(), 'finished')).toEqual({ gpuSeconds: 400, failedGpuSeconds: 80 });
  });

  it('a failed sweep: all it held, and all of it failed (its cell runs again or gives up)', () => {
    expect(sweepSpend(held(), 'failed')).toEqual({ gpuSeconds: 400, failedGpuSeconds: 400 });
  });

  it('no ledger (nothing held, an older sweep): nothing', () => {
    expect(sweepSpend(undefined, 'failed')).toEqual({ gpuSeconds: 0, failedGpuSeconds: 0 });
  });

  it('an allocation still open (its release failed) is not counted: only closed allocations are known', () => {
    const l = emptyLedger();
    ledgerGranted(l, 'j1', 8, 0);
    expect(sweepSpend(l, 'failed')).toEqual({ gpuSeconds: 0, failedGpuSeconds: 0 });
  });
});
