/**
 * The confirmation's one verb of its own (the rest are the sweep's: allocate, launch, measure, stop,
 * release): stage an arm of the paired A/B, the stored plan of a run with the image under test, as
 * the plan of one results folder of the confirmation. The derived plan ({@link abPlan}) changes only
 * the image, the point list and the allocation's time limit; it passes the same checks as a sweep's
 * plan (prepareSweep) and is read by reference like one.
 */
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { InputError, ResultsLayout } from '@infersweep/core';
import { computeTimeLimit, planContentHash, type SweepPlan } from '@infersweep/topology';
import type { ActivityContext } from './context';
import { assertAllowed } from './input-checks';
import { claimResultsDir } from './results-store';
import type { ConfirmActivities } from './types';

/**
 * The plan of one arm of a paired A/B: `base` with `image`, the one point `concurrency`, a server per
 * point, and an allocation time limit for 2 × `pairs` points by the plan's own formula
 * (import + 2k × (startup + warmup + profile + drain + teardown) + margin). Pure.
 */
export function abPlan(base: SweepPlan, o: { image: string; pairs: number; concurrency: number }): SweepPlan {
  const budget =
    base.pointBudgets.find((b) => b.concurrency === o.concurrency) ??
    base.pointBudgets.reduce((a, b) => (b.totalSeconds > a.totalSeconds ? b : a));
  const point = { ...budget, concurrency: o.concurrency };
  const limit = computeTimeLimit(base.budgets, Array<typeof point>(2 * o.pairs).fill(point), 'server-per-point');
  if (limit.minutes > base.slurm.maxWallMinutes)
    throw new InputError(
      `confirm.pairs = ${o.pairs}: the paired A/B needs ${limit.minutes} min on one allocation (${limit.derivation}), over the partition's ${base.slurm.maxWallMinutes} min; lower confirm.pairs in the worker's history settings`,
      { context: { step: 'confirm' } },
    );
  const body: SweepPlan = {
    ...base,
    image: o.image,
    slurm: { ...base.slurm, image: o.image, timeLimitMinutes: limit.minutes, timeLimitDerivation: limit.derivation },
    timeLimit: limit,
    points: [o.concurrency],
    pointBudgets: [point],
    deployment: { ...base.deployment, policy: 'server-per-point', allocations: 1, pointsPerAllocation: 2 * o.pairs },
  };
  delete body.search;
  return { ...body, planHash: planContentHash(body) };
}

export function confirmActivities(ctx: ActivityContext): ConfirmActivities {
  return {
    async stageArm({ sweepId, base, image, pairs, concurrency, resultsDir }) {
      ctx.assertOwnSweep(sweepId);
      ctx.assertResultsDir(resultsDir, 'resultsDir');
      const { plan } = await ctx.open({ planRef: base });
      const arm = abPlan(plan, { image, pairs, concurrency });
      assertAllowed(arm, resultsDir, ctx.deps.settings);
      await claimResultsDir(resultsDir, sweepId);
      const file = new ResultsLayout(resultsDir).planFile;
      await mkdir(dirname(file), { recursive: true });
      await writeFile(`${file}.tmp-${process.pid}`, JSON.stringify(arm, null, 2));
      await rename(`${file}.tmp-${process.pid}`, file);
      return { planHash: arm.planHash, resultsDir };
    },
  };
}
