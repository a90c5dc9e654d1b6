/**
 * The confirmation of a flagged regression, told as a story (the contract: libs/sweep/src/confirm.ts):
 * a paired A/B of the last good run's context against the flagged run's, on one allocation; when
 * the regression is confirmed and candidate images lie between the two, a bisection, each step one
 * more paired A/B (the last good context against the flagged one with the candidate image); then the
 * notification. Each comparison: stage the 2k arms' plans, allocate, and per pair A then B: launch,
 * wait ready, measure the point, stop; release. The statistic (libs/stats pairedComparison) is pure
 * and runs here, so the decision is part of the workflow's replayable state. Workflow code:
 * deterministic, all work in activities; a worker restart resumes where the history left off.
 */
import { ApplicationFailure, CancellationScope, proxyActivities } from '@temporalio/workflow';
import { pairedComparison } from '@infersweep/stats';
import {
  armValue,
  Bisection,
  type ComparisonResult,
  type ConfirmArm,
  type ConfirmInput,
  type ConfirmResult,
} from '@infersweep/sweep';
import { allocationJobName } from '@infersweep/core';
import type { Allocation, ConfirmActivities, PlanInput, PlanRef } from '../activities/types';
import { activitiesFor } from './activities';

export async function confirmWorkflow(input: ConfirmInput): Promise<ConfirmResult> {
  const c = new Confirmation(input);
  const first = await c.compare('confirm', input.good, input.current);
  let culprit: ConfirmResult['culprit'];
  if (first.outcome === 'confirmed') {
    culprit = { image: input.current.image, comparison: first, bisected: false };
    const b = new Bisection(input.candidates.length);
    for (let i = b.next(); i !== undefined; i = b.next()) {
      const image = input.candidates[i]!;
      const r = await c.compare(`bisect-${c.steps.length}`, input.good, { ...input.current, image });
      b.record(i, r.outcome === 'confirmed');
      if (r.outcome === 'confirmed') culprit = { image, comparison: r, bisected: true };
    }
    if (input.candidates.length > 0 && b.firstBad === input.candidates.length) culprit.bisected = true;
  }
  return {
    confirmId: input.confirmId,
    sweepId: input.sweepId,
    outcome: first.outcome,
    metric: input.metric,
    concurrency: input.concurrency,
    comparison: first,
    ...(culprit ? { culprit } : {}),
    steps: c.steps,
  };
}

class Confirmation {
  readonly steps: ComparisonResult[] = [];
  private readonly act: ReturnType<typeof activitiesFor> & ConfirmActivities;
  private allocations = 0;
  private servers = 0;

  constructor(private readonly input: ConfirmInput) {
    const { stageArm } = proxyActivities<ConfirmActivities>({
      startToCloseTimeout: '2 minutes',
      retry: { maximumAttempts: 5, initialInterval: '1 second', maximumInterval: '10 seconds' },
    });
    this.act = { ...activitiesFor(input), stageArm };
  }

  /** One paired A/B on one allocation: `pairs` × (A then B) at the flagged concurrency. */
  async compare(step: string, a: ConfirmArm, b: ConfirmArm): Promise<ComparisonResult> {
    const { confirmId, pairs, concurrency, resultsRoot } = this.input;
    const arms: { ref: PlanRef; label: 'A' | 'B' }[][] = [];
    for (let i = 1; i <= pairs; i++) {
      const pair: { ref: PlanRef; label: 'A' | 'B' }[] = [];
      for (const [label, arm] of [
        ['A', a],
        ['B', b],
      ] as const) {
        const resultsDir = `${resultsRoot}/${confirmId}/${step}/pair-${i}-${label}`;
        const ref = await this.act.stageArm({
          sweepId: confirmId,
          base: arm.planRef,
          image: arm.image,
          pairs,
          concurrency,
          resultsDir,
        });
        pair.push({ ref, label });
      }
      arms.push(pair);
    }
    const attempt = (this.allocations += 1);
    const jobName = allocationJobName(confirmId, attempt, this.input.deploymentTag ?? '');
    const held = { planRef: arms[0]![1]!.ref };
    let alloc: Allocation | undefined;
    const values: [number | null, number | null][] = [];
    try {
      alloc = await this.act.allocate({ ...held, sweepId: confirmId, jobName, attempt });
      for (const pair of arms) {
        const v: (number | null)[] = [];
        for (const arm of pair) v.push(await this.measure({ planRef: arm.ref }, alloc, attempt));
        values.push([v[0]!, v[1]!]);
      }
    } finally {
      await CancellationScope.nonCancellable(() =>
        this.act.release({ ...held, jobName, ...(alloc ? { jobId: alloc.jobId } : {}) }),
      );
    }
    const s = pairedComparison(values, {
      higherIsBetter: this.input.higherIsBetter,
      gate: this.input.gate,
      level: this.input.level,
    });
    // fail closed: a comparison that could not measure does not clear a regression
    if (s.pairs < 2)
      throw ApplicationFailure.nonRetryable(
        `${step}: only ${s.pairs} of ${pairs} pairs measured ${this.input.metric} (invalid or unmeasured points): the A/B cannot decide`,
        'ConfirmUnmeasured',
      );
    const r: ComparisonResult = {
      step,
      a: a.image,
      b: b.image,
      values,
      pairs: s.pairs,
      relativeEffect: s.relativeEffect,
      relativeLower: s.relativeLower,
      relativeUpper: s.relativeUpper,
      level: s.level,
      gate: s.gate,
      outcome: s.outcome,
      jobId: alloc?.jobId ?? '',
    };
    this.steps.push(r);
    return r;
  }

  /** One arm of one pair: a fresh server of the arm's plan, one point, the server stopped. */
  private async measure(plan: PlanInput, allocation: Allocation, allocationAttempt: number): Promise<number | null> {
    const { confirmId, concurrency, startupBudgetSeconds, pointBudgetSeconds, metric } = this.input;
    const serverIndex = (this.servers += 1);
    const resultsDir = plan.planRef.resultsDir;
    const deployment = await this.act.launchServer({
      ...plan,
      sweepId: confirmId,
      allocation,
      serverIndex,
      resultsDir,
    });
    try {
      await this.act.waitReady({ ...plan, deployment, startupBudgetSeconds });
      const summary = await this.act.runPoint({
        ...plan,
        sweepId: confirmId,
        planHash: plan.planRef.planHash,
        deployment,
        concurrency,
        attempt: 1,
        allocationAttempt,
        policy: 'server-per-point',
        pointBudgetSeconds,
        resultsDir,
        serverUsed: false,
      });
      return armValue(summary, metric);
    } finally {
      await CancellationScope.nonCancellable(() => this.act.stopServer({ ...plan, deployment }));
    }
  }
}
