import type { AgentxSettings } from '../config/agentx';
import type { PathSegment } from '../config/parse';
import type { Budgets, SweepConfig, Orientation } from '../config/schema';
import type { Topology } from '../topology/validate';
import type { PlanReplicates, PlanSearch } from './schema';
import { pointCost } from './timelimit';

/** What this step reads from the plan draft (./draft.ts PlanDraft has it). */
export interface ReplicatesDraft {
  config: Pick<SweepConfig, 'replicates'>;
  oName: string;
  orientation: Orientation;
  oPath: PathSegment[];
  issues: { add(path: readonly PathSegment[], value: unknown, message: string): void };
  notes: string[];
}

/**
 * The replicates block of an orientation (its own, else the sweep's; config/replicates.ts) resolved
 * against the plan: which points it may replicate, and the worst case (every replicated point at
 * `max`) in allocations and GPU-hours, which the block's GPU-hour budget must cover. A replicate
 * round runs a subset of the first pass's points on its own allocation, so the per-allocation time
 * limit already covers it.
 */
export function planReplicates(
  d: ReplicatesDraft,
  p: {
    topology: Topology;
    points: readonly number[];
    budgets: Budgets;
    agentx: AgentxSettings;
    search: PlanSearch | undefined;
  },
): PlanReplicates | undefined {
  const own = d.orientation.replicates;
  const r = own ?? d.config.replicates;
  if (r === undefined) return undefined;
  const where: PathSegment[] = own ? [...d.oPath, 'replicates'] : ['replicates'];
  const { points, search } = p;
  const max = r.max ?? r.min;
  if (r.points !== 'all') {
    r.points.forEach((x, i) => {
      const at = [...where, 'points', i];
      if (x === 'slo-limit' && !search?.goal.includes('slo-limit'))
        d.issues.add(
          at,
          x,
          `orientation ${d.oName} has no slo-limit search to answer it; add search.goal: slo-limit or list concurrencies`,
        );
      else if (x === 'knee' && !search?.goal.includes('frontier'))
        d.issues.add(
          at,
          x,
          `orientation ${d.oName} has no frontier search to find a knee; add search.goal: frontier or list concurrencies`,
        );
      else if (typeof x === 'number' && !points.includes(x))
        d.issues.add(
          at,
          x,
          `c=${x} is not a point of orientation ${d.oName} [${points.join(', ')}]; list one of those`,
        );
    });
  }
  const { gpus, pointGpuHours } = pointCost(p);
  const firstPass = search?.worstCasePoints ?? points.length;
  const replicatedPoints = r.points === 'all' ? firstPass : new Set(r.points).size;
  const extraPoints = (max - 1) * replicatedPoints;
  // each round is a fresh allocation with a fresh server: its startup is paid once per round
  const startupGpuHours = (gpus * p.budgets.startupSeconds) / 3600;
  const singlePassGpuHours = firstPass * pointGpuHours + startupGpuHours;
  const worstCaseGpuHours = singlePassGpuHours + extraPoints * pointGpuHours + (max - 1) * startupGpuHours;
  if (r.gpuHourBudget !== undefined && worstCaseGpuHours > r.gpuHourBudget + 1e-9)
    d.issues.add(
      [...where, 'gpuHourBudget'],
      r.gpuHourBudget,
      `the worst case (${replicatedPoints} point(s) × ${max} replicates, ${firstPass + extraPoints} points and ${max - 1} more allocations) costs ${worstCaseGpuHours.toFixed(1)} GPU-hours; raise the budget, lower max or replicate fewer points`,
    );
  const target = r.target ?? {};
  const targetText = Object.entries(target)
    .map(([m, v]) => `${m} ±${(100 * v).toFixed(1)} %`)
    .join(', ');
  const summary =
    `${r.points === 'all' ? 'all points' : r.points.join(', ')}: ${r.min}${max > r.min ? `–${max}` : ''} replicates on ${r.independentAllocations ? 'independent' : 'fresh'} allocations` +
    `${targetText ? ` until the 95 % CI is within ${targetText}` : ' (fixed n)'}; worst case ${firstPass + extraPoints} points on ${max - 1} more allocation(s), ${worstCaseGpuHours.toFixed(1)} GPU-hours (a single pass: ${singlePassGpuHours.toFixed(1)})`;
  d.notes.push(`replicates: ${summary}`);
  return {
    points: r.points,
    min: r.min,
    max,
    target,
    independentAllocations: r.independentAllocations,
    ...(r.gpuHourBudget === undefined ? {} : { gpuHourBudget: r.gpuHourBudget }),
    pointGpuHours,
    startupGpuHours,
    replicatedPoints,
    worstCaseExtraPoints: extraPoints,
    worstCaseExtraAllocations: max - 1,
    worstCaseGpuHours,
    singlePassGpuHours,
    summary,
  };
}
