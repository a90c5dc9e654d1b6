import type { AgentxSettings } from '../config/agentx';
import type { Budgets } from '../config/schema';
import type { PlanDraft } from './draft';
import type { EngineSettings } from './engine';
import type { EngineOverrideView } from './resolve-override';
import type { PointBudget, SweepPlan, TimeLimit } from './schema';
import { computeTimeLimit, pointBudget } from './timelimit';

export interface AllocationPlan {
  pointBudgets: PointBudget[];
  timeLimit: TimeLimit;
  deployment: SweepPlan['deployment'];
}

/**
 * How the points are spread over allocations (the deployment policy) and each allocation's Slurm
 * time limit: it covers the longest points one allocation holds, and must fit the partition's
 * MaxTime (refused with the ways out). Warns when vLLM's own readiness wait outlasts the startup
 * budget.
 */
export function planAllocation(
  d: PlanDraft,
  points: readonly number[],
  budgets: Budgets,
  agentx: AgentxSettings,
  es: EngineSettings,
  o: EngineOverrideView,
): AllocationPlan {
  const { config, orientation, cluster } = d;
  const pointBudgets = points.map((c) =>
    pointBudget(c, budgets, agentx.profileDurationSeconds, agentx.drain.deadlineSeconds),
  );
  const policy = orientation.deployment?.policy ?? config.deployment.policy;
  const perAllocation =
    policy === 'allocation-per-point'
      ? 1
      : (orientation.deployment?.pointsPerAllocation ?? config.deployment.pointsPerAllocation);
  // the allocation holds at most `perAllocation` points: its time limit covers the longest that many
  const allocationPoints =
    perAllocation === undefined
      ? pointBudgets
      : [...pointBudgets].sort((a, b) => b.totalSeconds - a.totalSeconds).slice(0, perAllocation);
  const timeLimit = computeTimeLimit(budgets, allocationPoints, policy);
  if (timeLimit.minutes > cluster.maxWallMinutes) {
    d.issues.add(
      ['clusters', d.opts.cluster, 'maxWallMinutes'],
      cluster.maxWallMinutes,
      `orientation ${d.oName} needs a ${timeLimit.minutes}-minute allocation (${timeLimit.derivation}) but partition ${cluster.partition} allows ${cluster.maxWallMinutes} minutes; ` +
        `fix: fewer points (--points), shorter durations (agentx.profileDurationSeconds, budgets.*), deployment.policy: allocation-per-point, or a partition with a longer MaxTime`,
    );
    d.issues.throwIfAny();
  }
  const engineReadyTimeout = Number(es.env.VLLM_ENGINE_READY_TIMEOUT_S ?? '600');
  if (o.sim === undefined && engineReadyTimeout > budgets.startupSeconds) {
    d.warnings.push(
      `VLLM_ENGINE_READY_TIMEOUT_S=${engineReadyTimeout} exceeds budgets.startupSeconds ${budgets.startupSeconds}: the readiness deadline will cut vLLM's own wait short`,
    );
  }
  return {
    pointBudgets,
    timeLimit,
    deployment: {
      policy,
      maxAllocationAttempts: config.deployment.maxAllocationAttempts,
      ...(perAllocation === undefined ? {} : { pointsPerAllocation: perAllocation }),
      allocations: perAllocation === undefined ? 1 : Math.ceil(points.length / perAllocation),
    },
  };
}
