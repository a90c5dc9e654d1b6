import { resolutionStep, searchCap, searchPointBound } from '@infersweep/core';
import type { AgentxSettings } from '../config/agentx';
import type { PathSegment } from '../config/parse';
import type { Budgets, Orientation } from '../config/schema';
import type { Topology } from '../topology/validate';
import type { PlanSearch } from './schema';
import { perRank, type EngineSettings } from './engine';
import { pointCost } from './timelimit';

/** What this step reads from the plan draft (./draft.ts PlanDraft has it). */
export interface SearchDraft {
  oName: string;
  orientation: Orientation;
  oPath: PathSegment[];
  issues: { add(path: readonly PathSegment[], value: unknown, message: string): void };
  warnings: string[];
  notes: string[];
}

/**
 * The adaptive search's bounds and worst case (config/search.ts; the workflow decides each point with
 * libs/sweep/src/search.ts): how many points it may add (maxPoints, or fewer if the GPU-hour budget
 * pays for fewer), the slo-limit search's proven bound, and the concurrencies the time limit and the
 * engine settings must cover beyond the configured points. The configured points are where the
 * search starts: they must lie inside [minConcurrency, maxConcurrency].
 */
export function planSearch(
  d: SearchDraft,
  p: { topology: Topology; points: readonly number[]; budgets: Budgets; agentx: AgentxSettings },
): PlanSearch | undefined {
  const s = d.orientation.search;
  if (s === undefined) return undefined;
  const { points } = p;
  const { gpus, pointSeconds, pointGpuHours } = pointCost(p);
  const where = [...d.oPath, 'search'];
  for (const c of points) {
    if (c < s.minConcurrency || c > s.maxConcurrency)
      d.issues.add(
        [...d.oPath, 'concurrency'],
        c,
        `the search starts from the configured points, which must lie in [${s.minConcurrency}, ${s.maxConcurrency}] (search.minConcurrency/maxConcurrency); widen the bounds or drop the point`,
      );
  }
  const { cap, by } = searchCap({ ...s, pointGpuHours }, points.length);
  if (s.gpuHourBudget !== undefined && points.length * pointGpuHours > s.gpuHourBudget + 1e-9)
    d.issues.add(
      [...where, 'gpuHourBudget'],
      s.gpuHourBudget,
      `the ${points.length} configured point(s) alone cost ${(points.length * pointGpuHours).toFixed(1)} GPU-hours (${gpus} GPUs × ${pointSeconds} s each); raise the budget or configure fewer points`,
    );
  const limitBound = s.goal.includes('slo-limit') ? searchPointBound(s) : undefined;
  if (limitBound !== undefined && limitBound > cap)
    d.warnings.push(
      `orientation ${d.oName}: the SLO limit may stay unresolved: bracketing and bisecting [${s.minConcurrency}, ${s.maxConcurrency}] to resolution ${resolutionStep(s.resolution, s.minConcurrency)} takes up to ${limitBound} points, the search may add ${cap} (${by})`,
    );
  // the time limit and the engine settings cover the worst case: `cap` more points, at the top of the range
  const taken = new Set(points);
  const budgetedPoints: number[] = [];
  for (let c = s.maxConcurrency; c >= s.minConcurrency && budgetedPoints.length < cap; c--)
    if (!taken.has(c)) budgetedPoints.push(c);
  const worstCasePoints = points.length + budgetedPoints.length;
  const summary =
    `${s.goal.join(' + ')} in [${s.minConcurrency}, ${s.maxConcurrency}]: up to ${budgetedPoints.length} point(s) added (${by === 'max-points' ? `maxPoints ${s.maxPoints}` : `GPU-hour budget ${s.gpuHourBudget}`}` +
    `${limitBound === undefined ? '' : `; the SLO limit needs at most ${limitBound}`}); worst case ${worstCasePoints} points × ${pointSeconds} s = ${((worstCasePoints * pointSeconds) / 3600).toFixed(2)} h, ${(worstCasePoints * pointGpuHours).toFixed(1)} GPU-hours`;
  d.notes.push(`search: ${summary}`);
  return {
    ...s,
    pointGpuHours,
    maxAddedPoints: budgetedPoints.length,
    ...(limitBound === undefined ? {} : { sloLimitPointBound: limitBound }),
    budgetedPoints,
    worstCasePoints,
    worstCaseSeconds: worstCasePoints * pointSeconds,
    summary,
  };
}

/**
 * How a search stands to the engine settings (a plan note): the engine is the recipe's, derived from
 * the configured points (./plan.ts), so a search sweep and the fixed recipe run the same engine and
 * the same engine fingerprint at the same concurrency. The note names the added points that would
 * queue in the scheduler under that engine and the pin that sizes the engine for the search range
 * instead (a different engine, and a different fingerprint, on purpose).
 */
export function noteSearchEngine(
  d: Pick<SearchDraft, 'oName' | 'notes'>,
  topology: Pick<Topology, 'dp'>,
  settings: Pick<EngineSettings, 'maxNumSeqs' | 'maxNumSeqsSource' | 'maxNumSeqsDerivation'>,
  addable: readonly number[],
): void {
  const dp = topology.dp;
  const top = Math.max(0, ...addable);
  const queued = addable.filter((c) => perRank(c, dp) > settings.maxNumSeqs);
  const engine = `--max-num-seqs ${settings.maxNumSeqs} (${settings.maxNumSeqsDerivation})`;
  if (queued.length === 0) {
    d.notes.push(`search: the engine is the recipe's, ${engine}; no point the search may add queues in the scheduler`);
    return;
  }
  const sized = perRank(top, dp);
  d.notes.push(
    `search: the engine is the recipe's, ${engine}, whatever points the search adds; an added point above c=${settings.maxNumSeqs * dp} puts more than ${settings.maxNumSeqs} sessions on a DP rank and measures scheduler queueing` +
      (settings.maxNumSeqsSource === 'pinned'
        ? ''
        : `; to size the engine for the search range instead, pin orientations.${d.oName}.engine.maxNumSeqs: ${sized} (⌈${top} / DP ${dp}⌉: a different engine than the recipe's, with its own engine fingerprint)`),
  );
}
