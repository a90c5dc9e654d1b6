/**
 * The pure parts of a confirmation's arms: the A/B plan derived from a run's stored plan (image,
 * one point, a server per point, the time limit of 2k points by the plan's own formula), the local
 * stack's image catalog applied to the simulator's argv, and the bisection's search order.
 */
import { describe, expect, it } from 'vitest';
import { InputError } from '@infersweep/core';
import { planContentHash, planSweep } from '@infersweep/topology';
import { Bisection, maxBisectionSteps } from '@infersweep/sweep';
import { loadSweepConfig } from '../src/config-file';
import { abPlan } from '../src/activities/confirm';
import { localImageArgv, localImagesSchema } from '../src/activities/local-images';

const loaded = loadSweepConfig({ clusters: ['local'], env: { ...process.env, INFERSWEEP_STACK: '/stack' } });
const plan = planSweep(loaded.config, {
  orientation: 'latency',
  cluster: 'local',
  points: [1, 2],
  source: loaded.source,
});

describe('abPlan', () => {
  it('changes the image, the points and the time limit only, and rehashes', () => {
    const arm = abPlan(plan, { image: 'local/sim:3', pairs: 3, concurrency: 2 });
    expect([arm.image, arm.slurm.image, arm.points, arm.deployment.policy]).toEqual([
      'local/sim:3',
      'local/sim:3',
      [2],
      'server-per-point',
    ]);
    expect(arm.planHash).toBe(planContentHash(arm));
    expect(arm.planHash).not.toBe(plan.planHash);
    expect(arm.nodes).toEqual(plan.nodes);
    // 6 points, each with its own server start and teardown, by the plan's formula
    const b = plan.budgets;
    const point = plan.pointBudgets.find((p) => p.concurrency === 2)!.totalSeconds;
    expect(arm.timeLimit.baseSeconds).toBe(b.imageImportSeconds + 6 * (b.startupSeconds + point + b.teardownSeconds));
    expect(arm.slurm.timeLimitMinutes).toBe(arm.timeLimit.minutes);
    expect(arm.timeLimit.derivation).toContain('6 × (startup');
  });

  it('refuses more pairs than the partition allows on one allocation, naming the setting', () => {
    expect(() => abPlan(plan, { image: 'x', pairs: 500, concurrency: 1 })).toThrow(InputError);
    expect(() => abPlan(plan, { image: 'x', pairs: 500, concurrency: 1 })).toThrow(/lower confirm\.pairs/);
  });
});

describe('the local image catalog', () => {
  const argv = [
    'llm-d-inference-sim',
    '--time-to-first-token',
    '20ms',
    '--inter-token-latency',
    '5ms',
    '--mode',
    'random',
  ];
  const catalog = localImagesSchema.parse({
    images: { 'local/sim:3': { interTokenLatencyMs: 8 } },
    slowHost: [{ sweepIdPrefix: 'infersweep-sched-night', addInterTokenLatencyMs: 2 }],
  });

  it('launches a listed image at its latencies, an unlisted one as planned', () => {
    expect(localImageArgv(argv, 'local/sim:3', 's1', catalog)).toEqual([
      ...argv.slice(0, 4),
      '8ms',
      '--mode',
      'random',
    ]);
    expect(localImageArgv(argv, 'other', 's1', catalog)).toEqual(argv);
  });

  it('adds a slow host to the sweeps it names only (a confirmation is not one of them)', () => {
    expect(localImageArgv(argv, 'local/sim:3', 'infersweep-sched-night-x', catalog)[4]).toBe('10ms');
    expect(localImageArgv(argv, 'other', 'infersweep-sched-night-x', catalog)[4]).toBe('7ms');
    expect(localImageArgv(argv, 'local/sim:3', 'confirm-infersweep-sched-night-x', catalog)[4]).toBe('8ms');
  });
});

describe('Bisection', () => {
  it('finds the first bad of n candidates in at most ⌈log2(n + 1)⌉ steps, for every position', () => {
    for (let n = 0; n <= 9; n++)
      for (let bad = 0; bad <= n; bad++) {
        const b = new Bisection(n);
        let steps = 0;
        for (let i = b.next(); i !== undefined; i = b.next()) {
          b.record(i, i >= bad);
          steps++;
        }
        expect(b.firstBad, `n=${n} bad=${bad}`).toBe(bad);
        expect(steps).toBeLessThanOrEqual(maxBisectionSteps(n));
      }
  });

  it('refuses a result outside the open range', () => {
    const b = new Bisection(4);
    b.record(1, false);
    expect(() => b.record(0, true)).toThrow(/outside the open range/);
  });
});
