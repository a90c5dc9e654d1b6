import type { SweepConfig } from '../config/schema';
import { assemblePlan } from './assemble-plan';
import { buildNodes } from './build-nodes';
import { checkCapacity } from './check-capacity';
import { checkEngine } from './check-engine';
import { checkRecipe } from './check-recipe';
import { deriveEngineSettings } from './derive-engine-settings';
import { openDraft, type PlanOptions } from './draft';
import { planAgentx } from './plan-agentx';
import { planAllocation } from './plan-allocation';
import { planDisaggregated } from './plan-disagg';
import { planEndpoints } from './plan-endpoints';
import { planReplicates } from './plan-replicates';
import { noteSearchEngine, planSearch } from './plan-search';
import { planSecrets } from './plan-secrets';
import { resolveOverride } from './resolve-override';
import { resolveTopology } from './resolve-topology';
import type { SweepPlan } from './schema';
import { selectPoints } from './select-points';

/**
 * Plan one orientation on one cluster profile: validated topology, per-node argv/env/launchArgv
 * with placeholders, endpoints, expected DP engine ids, the Slurm request and time limit, points,
 * budgets, warnings and a content hash. Pure. Throws ConfigError listing every problem: each step
 * adds its problems to the draft, and the draft throws them together before the first step that
 * needs the earlier ones resolved.
 */
export function planSweep(config: SweepConfig, opts: PlanOptions): SweepPlan {
  if (config.orientations[opts.orientation]?.disaggregated !== undefined)
    return planDisaggregated(config, opts, planSweep);
  const d = openDraft(config, opts);
  const topology = resolveTopology(d);
  checkEngine(d, topology);
  const secretEnv = planSecrets(d);
  checkRecipe(d, topology);
  const { agentx, budgets } = planAgentx(d);
  const override = resolveOverride(d, topology, agentx);
  const points = selectPoints(d);
  const search = planSearch(d, { topology, points, budgets, agentx });
  const replicates = planReplicates(d, { topology, points, budgets, agentx, search });
  d.issues.throwIfAny();
  // the engine is the recipe's: derived from the configured points, never from the points a search
  // may add (a search sweep and the fixed recipe run the same engine at the same concurrency); the
  // capacity check and the time limit cover the points a search may add
  const covered = [...points, ...(search?.budgetedPoints ?? [])];
  const settings = deriveEngineSettings(d, topology, points, agentx);
  if (search) noteSearchEngine(d, topology, settings, search.budgetedPoints);
  const capacity = checkCapacity(d, { topology, settings, agentx, points: covered });
  const { commands, nodes } = buildNodes(d, topology, settings, override);
  const { endpoints, engineIds } = planEndpoints(d, topology, commands, override);
  const allocation = planAllocation(d, covered, budgets, agentx, settings, override);
  const parts = {
    topology,
    secretEnv,
    agentx,
    budgets,
    override,
    points,
    settings,
    capacity,
    commands,
    nodes,
    endpoints,
    engineIds,
    allocation,
    search,
    replicates,
  };
  return assemblePlan(d, parts);
}
