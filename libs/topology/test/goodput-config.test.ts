import { describe, expect, it } from 'vitest';
import { searchSchema, sloSchema } from '../src/index';

describe('config: goodput and InferenceX axis SLOs', () => {
  it('parses a goodput SLO with the 0.95 attainment default and makes it a slo-limit goal', () => {
    const s = searchSchema.parse({
      goal: 'slo-limit',
      slo: { goodput: { ttftMs: 2000, tpotMs: 50, e2elMs: 60000 }, minE2eNormInteractivityP90: 20 },
      maxConcurrency: 64,
    });
    expect(s.slo).toEqual({
      goodput: { attainment: 0.95, ttftMs: 2000, tpotMs: 50, e2elMs: 60000 },
      minE2eNormInteractivityP90: 20,
    });
  });

  it('a goodput block without a per-request bound is refused, naming the fields', () => {
    const r = sloSchema.safeParse({ goodput: { attainment: 0.9 } });
    expect(r.success).toBe(false);
    expect(r.error!.issues[0]!.message).toMatch(/ttftMs, tpotMs or e2elMs/);
  });

  it('an attainment outside (0, 1] and an unknown goodput field are refused', () => {
    expect(sloSchema.safeParse({ goodput: { attainment: 1.5, ttftMs: 100 } }).success).toBe(false);
    expect(sloSchema.safeParse({ goodput: { attainment: 0, ttftMs: 100 } }).success).toBe(false);
    expect(sloSchema.safeParse({ goodput: { itlMs: 100 } }).success).toBe(false);
  });
});
