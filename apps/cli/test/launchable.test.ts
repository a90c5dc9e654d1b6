import { describe, expect, it, vi } from 'vitest';
import { planSweep, parseSweepConfig, type SweepPlan } from '@infersweep/topology';
import { readFileSync } from 'node:fs';
import { EXIT, ExitWith } from '../src/ops/cli';
import { launchable } from '../src/ops/plans';

/** Sweeps do not launch disaggregated orientations yet: named ones are refused, `all` leaves them out aloud. */
const file = 'configs/kimik3-fp4-h200.yaml';
const text = readFileSync(new URL(`../../../${file}`, import.meta.url), 'utf8');
const { config, source } = parseSweepConfig(text, { file, env: { INFERSWEEP_STACK: '/stack' } });
const plans: SweepPlan[] = ['latency', 'pd-1p1d'].map((orientation) =>
  planSweep(config, { orientation, cluster: 'h200', source }),
);

describe('launchable (apps/cli/src/ops/plans.ts)', () => {
  it('refuses a named disaggregated orientation with a usage error (exit 2) that says why', () => {
    let caught: unknown;
    try {
      launchable([plans[1]!], 'pd-1p1d');
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(ExitWith);
    expect((caught as ExitWith).code).toBe(EXIT.usage);
    expect((caught as Error).message).toMatch(/pd-1p1d is disaggregated .*do not launch P\/D deployments yet/);
  });

  it('under --orientation all keeps the aggregated plans and prints which it left out', () => {
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(launchable(plans, 'all').map((p) => p.orientation)).toEqual(['latency']);
      expect(spy.mock.calls.map((c) => String(c[0])).join('')).toMatch(
        /leaving out disaggregated orientation\(s\) pd-1p1d/,
      );
    } finally {
      spy.mockRestore();
    }
    expect(() => launchable([plans[1]!], 'all')).toThrow(/every orientation is disaggregated/);
    expect(launchable([plans[0]!], 'latency')).toEqual([plans[0]]);
  });
});
