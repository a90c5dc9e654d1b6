import type { RouterSpec } from '../config/disagg';
import { STAND_IN_SCRIPT } from './build-nodes';
import type { SweepPlan } from './schema';

/**
 * The P/D routers infersweep launches itself, as a step of their own (llm-d's pd-sidecar); a
 * vllm-router's or toy-proxy's argv is planned and shown, not launched.
 */
export const routerLaunched = (kind: RouterSpec['kind']): boolean => kind === 'llm-d-pd-sidecar';

/** The simulator override's stand-in for a non-head node: infersweep's own script, which only prints its arguments. */
export const isStandIn = (argv: readonly string[]): boolean =>
  argv[0] === 'bash' && argv[1] === '-c' && argv[2] === STAND_IN_SCRIPT;

/** One executable a plan launches on the cluster's nodes under srun. */
export interface LaunchedExecutable {
  /** The plan field holding it (the first node's, when several launch it). */
  field: string;
  /** argv[0] as launched ('' for an empty argv). */
  executable: string;
  /** Where it runs, e.g. `on node ranks 0, 1` or `as the P/D router (llm-d-pd-sidecar) on node rank 2`. */
  where: string;
  /** The config field a planner sets it from. */
  plannedFrom: string;
}

const ranks = (rs: readonly number[]): string => `node rank${rs.length > 1 ? 's' : ''} ${rs.join(', ')}`;

/**
 * Every executable (argv[0]) the plan launches on the nodes: each node's `launchArgv` (vLLM, the
 * simulator or vLLM's CPU build; the simulator's stand-ins are infersweep's own script and not
 * listed) and the P/D router infersweep launches. One entry per executable, with the ranks that
 * launch it. Pure: what the worker checks against its settings before anything runs
 * (libs/orchestrator/src/activities/input-checks.ts).
 */
export function launchedExecutables(plan: SweepPlan): LaunchedExecutable[] {
  const engineFrom =
    plan.engine.launch === 'vllm' ? "the planner's `vllm serve`" : `clusters.${plan.cluster}.engineOverride.binary`;
  const byExecutable = new Map<string, { field: string; ranks: number[] }>();
  for (const n of plan.nodes) {
    if (isStandIn(n.launchArgv)) continue;
    const executable = n.launchArgv[0] ?? '';
    const seen = byExecutable.get(executable);
    if (seen) seen.ranks.push(n.rank);
    else byExecutable.set(executable, { field: `plan.nodes[${n.rank}].launchArgv[0]`, ranks: [n.rank] });
  }
  const out: LaunchedExecutable[] = [...byExecutable].map(([executable, e]) => ({
    field: e.field,
    executable,
    where: `on ${ranks(e.ranks)}`,
    plannedFrom: engineFrom,
  }));
  const r = plan.disaggregation?.router;
  if (r !== undefined && routerLaunched(r.kind))
    out.push({
      field: 'plan.disaggregation.router.argv[0]',
      executable: r.argv[0] ?? '',
      where: `as the P/D router (${r.kind}) on ${ranks([r.node])}`,
      plannedFrom: `clusters.${plan.cluster}.engineOverride.pdRouter.binary or orientations.${plan.orientation}.disaggregated.router.binary`,
    });
  return out;
}
