import { describe, expect, it } from 'vitest';
import { parseSweepConfig, planSweep, replicatesSchema } from '../../src/index';
import { edit, SHIPPED, stackEnv } from '../helpers';
import { configErrorOf } from './fixture';

/** The shipped config with a `replicates:` block (and optionally a search) on the latency orientation (points 1, 2, 4, 8). */
const withReplicates = (block: string, search = '') =>
  edit(
    '    concurrency: [1, 2, 4, 8]\n',
    `    concurrency: [1, 2, 4, 8]\n${search ? `    search:\n${search.replace(/^/gm, '      ')}\n` : ''}    replicates:\n${block.replace(/^/gm, '      ')}\n`,
  );

const planOf = (text: string, orientation = 'latency') => {
  const { config, source } = parseSweepConfig(text, { file: SHIPPED, env: stackEnv });
  return planSweep(config, { orientation, cluster: 'local', source });
};

// local: 16 GPUs (TP8 × PP2), each point 60 s, a server's startup budget 60 s
const POINT_GPU_H = (16 * 60) / 3600;
const STARTUP_GPU_H = (16 * 60) / 3600;

describe('the replicates block', () => {
  it('defaults: all points, min 3, max = min, no target, independent allocations', () => {
    expect(replicatesSchema.parse({})).toEqual({ points: 'all', min: 3, independentAllocations: true });
    const plan = planOf(withReplicates('min: 3'));
    expect(plan.replicates).toMatchObject({ points: 'all', min: 3, max: 3, target: {}, independentAllocations: true });
  });

  it('puts the worst case (every replicated point at max) in the plan, with each round’s startup', () => {
    const plan = planOf(withReplicates('min: 3\nmax: 6\ntarget: { totalThroughputPerGpu: 0.03 }'));
    expect(plan.replicates).toMatchObject({
      max: 6,
      replicatedPoints: 4,
      worstCaseExtraPoints: 20,
      worstCaseExtraAllocations: 5,
      singlePassGpuHours: 4 * POINT_GPU_H + STARTUP_GPU_H,
    });
    expect(plan.replicates!.worstCaseGpuHours).toBeCloseTo(24 * POINT_GPU_H + 6 * STARTUP_GPU_H, 9);
    expect(plan.notes.find((n) => n.startsWith('replicates: '))).toContain(
      'worst case 24 points on 5 more allocation(s)',
    );
  });

  it('replicates a search’s answer only: one point, whatever the search adds', () => {
    const plan = planOf(
      withReplicates(
        'points: [slo-limit]\nmax: 5\ntarget: { totalThroughputPerGpu: 0.03 }',
        'goal: slo-limit\nslo: { ttftMs: { p99: 2000 } }\nmaxConcurrency: 64\nmaxPoints: 4',
      ),
    );
    expect(plan.replicates).toMatchObject({ points: ['slo-limit'], replicatedPoints: 1, worstCaseExtraPoints: 4 });
    expect(plan.replicates!.singlePassGpuHours).toBeCloseTo(8 * POINT_GPU_H + STARTUP_GPU_H, 9);
  });

  it('the sweep-level block applies to every orientation without its own', () => {
    const text = edit(/^orientations:\n/m, 'replicates: { min: 4 }\norientations:\n');
    expect(planOf(text, 'balanced').replicates).toMatchObject({ min: 4, max: 4 });
  });

  it('refuses bad input naming the field, the value and the fix', () => {
    const cases: [string, string, string][] = [
      ['min: 2', 'replicates.min', 'min must be ≥ 3'],
      ['min: 4\nmax: 3', 'replicates.max', 'max must be ≥ min'],
      ['max: 5', 'replicates.target', 'max above min needs a precision target'],
      [
        'target: { throughput: 0.03 }',
        'replicates.target.throughput',
        'unknown metric "throughput"; a replicate target names one of totalThroughputPerGpu',
      ],
      ['target: { ttftP99Ms: 3 }', 'replicates.target.ttftP99Ms', 'a target is a fraction < 1'],
      ['points: some', 'replicates.points', 'points is all, or a list of concurrencies'],
    ];
    for (const [block, field, fix] of cases) {
      const e = configErrorOf(() => planOf(withReplicates(block)));
      expect(e.message, block).toContain(`orientations.latency.${field}`);
      expect(e.message, block).toContain(fix);
    }
  });

  it('refuses points the plan cannot replicate, and a budget below the worst case', () => {
    const e = configErrorOf(() => planOf(withReplicates('points: [3, slo-limit, knee]')));
    expect(e.message).toContain('orientations.latency.replicates.points[0]: 3');
    expect(e.message).toContain('c=3 is not a point of orientation latency [1, 2, 4, 8]');
    expect(e.message).toContain('no slo-limit search to answer it; add search.goal: slo-limit');
    expect(e.message).toContain('no frontier search to find a knee');
    const b = configErrorOf(() => planOf(withReplicates('gpuHourBudget: 1')));
    expect(b.message).toContain('orientations.latency.replicates.gpuHourBudget');
    expect(b.message).toMatch(
      /worst case .* costs 4\.0 GPU-hours; raise the budget, lower max or replicate fewer points/,
    );
  });
});
