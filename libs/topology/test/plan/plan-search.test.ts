import { describe, expect, it } from 'vitest';
import { parseSweepConfig, planSweep } from '../../src/index';
import { edit, SHIPPED, shippedText, stackEnv } from '../helpers';
import { configErrorOf } from './fixture';

/** The shipped config with a `search:` block on the latency orientation (configured points 1, 2, 4, 8). */
const withSearch = (block: string) =>
  edit(
    '    concurrency: [1, 2, 4, 8]\n',
    `    concurrency: [1, 2, 4, 8]\n    search:\n${block.replace(/^/gm, '      ')}\n`,
  );

const planOf = (text: string, cluster = 'local') => {
  const { config, source } = parseSweepConfig(text, { file: SHIPPED, env: stackEnv });
  return planSweep(config, { orientation: 'latency', cluster, source });
};

describe('planSearch: the search bounds and the worst case in the plan', () => {
  const text = withSearch(
    'goal: slo-limit\nslo: { ttftMs: { p99: 2000 } }\nmaxConcurrency: 64\nmaxPoints: 6\nresolution: { absolute: 1 }',
  );

  it('shows the bounds, the proven bound and the worst case; the time limit covers it', () => {
    const plan = planOf(text);
    // local: 16 GPUs (TP8 × PP2), each point 20 s warm-up + 10 s profile + 30 s drain = 60 s
    expect(plan.search).toMatchObject({
      goal: ['slo-limit'],
      minConcurrency: 1,
      maxConcurrency: 64,
      maxAddedPoints: 6,
      sloLimitPointBound: 6 + 6,
      budgetedPoints: [64, 63, 62, 61, 60, 59],
      worstCasePoints: 10,
      worstCaseSeconds: 600,
      pointGpuHours: (16 * 60) / 3600,
    });
    expect(plan.points).toEqual([1, 2, 4, 8]);
    expect(plan.timeLimit.derivation).toContain('10 × (warmup 20 s + profile 10 s + drain 30 s)');
    expect(plan.notes.find((n) => n.startsWith('search: '))).toContain('worst case 10 points × 60 s');
    expect(plan.warnings).toContain(
      'orientation latency: the SLO limit may stay unresolved: bracketing and bisecting [1, 64] to resolution 1 takes up to 12 points, the search may add 6 (max-points)',
    );
    // the engine is the recipe's: the same --max-num-seqs and argv as the plan without a search
    const recipe = planOf(shippedText);
    expect(plan.engine.settings.maxNumSeqs).toBe(8);
    expect(recipe.engine.settings.maxNumSeqs).toBe(8);
    expect(plan.nodes[0]!.commonArgs).toEqual(recipe.nodes[0]!.commonArgs);
    // the plan says which added points queue under it and how to size the engine for the search instead
    expect(plan.notes).toContain(
      "search: the engine is the recipe's, --max-num-seqs 8 (⌈8 / DP 1⌉ = 8), whatever points the search adds; an added point above c=8 puts more than 8 sessions on a DP rank and measures scheduler queueing; to size the engine for the search range instead, pin orientations.latency.engine.maxNumSeqs: 64 (⌈64 / DP 1⌉: a different engine than the recipe's, with its own engine fingerprint)",
    );
  });

  it('a GPU-hour budget caps the added points', () => {
    // 16 GPUs × 60 s = 0.267 GPU-h per point: 2 GPU-h pay for 7 points, 4 of them configured
    const plan = planOf(
      withSearch('goal: slo-limit\nslo: { maxErrorRate: 0.01 }\nmaxConcurrency: 64\ngpuHourBudget: 2'),
    );
    expect(plan.search).toMatchObject({ maxAddedPoints: 3, worstCasePoints: 7 });
    expect(plan.timeLimit.derivation).toContain('7 × (warmup');
  });

  it('refuses configured points outside the bounds and a budget the configured points already exceed', () => {
    const e = configErrorOf(() =>
      planOf(
        withSearch(
          'goal: slo-limit\nslo: { maxErrorRate: 0.01 }\nminConcurrency: 2\nmaxConcurrency: 4\ngpuHourBudget: 0.5',
        ),
      ),
    );
    expect(e.issues.map((i) => [i.path, i.value])).toEqual([
      ['orientations.latency.concurrency', '1'],
      ['orientations.latency.concurrency', '8'],
      ['orientations.latency.search.gpuHourBudget', '0.5'],
    ]);
    expect(e.issues[0]!.message).toContain('must lie in [2, 4] (search.minConcurrency/maxConcurrency)');
    expect(e.issues[2]!.message).toContain('the 4 configured point(s) alone cost 1.1 GPU-hours');
  });

  it('a plan without a search has no search block', () => {
    expect(planOf(shippedText).search).toBeUndefined();
  });
});
