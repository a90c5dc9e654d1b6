import { ConfigError, showValue, type ConfigIssue } from '../config/errors';
import { dotted, lineOf, type ConfigSource, type PathSegment } from '../config/parse';
import type { ClusterProfile, Orientation, SweepConfig, TopologySpec } from '../config/schema';
import { recipeFor, type RecipeConstraint } from '../topology/recipes';

export interface PlanOptions {
  orientation: string;
  cluster: string;
  /** Run only these concurrency points (each must be in the orientation's list). */
  points?: readonly number[];
  /** For error messages (file and line numbers). */
  source?: ConfigSource;
  /** Plan even when the capacity check refuses (the refusal stays in the plan's warnings and capacity block). */
  force?: boolean;
}

/** Every problem a plan step finds, with its config path and line; thrown together as one ConfigError. */
export class Issues {
  readonly list: ConfigIssue[] = [];
  constructor(
    private readonly source: ConfigSource | undefined,
    readonly file: string = source?.file ?? '(config)',
  ) {}
  add(path: readonly PathSegment[], value: unknown, message: string): void {
    this.list.push({ path: dotted(path), value: showValue(value), message, line: lineOf(this.source, path) });
  }
  throwIfAny(): void {
    if (this.list.length > 0) throw new ConfigError(this.file, this.list);
  }
}

/**
 * What every plan step reads (the config, the chosen orientation and cluster profile) and where it
 * reports (issues, warnings, notes). The steps in this folder take a draft and return their part of
 * the plan; planSweep (plan.ts) runs them in order.
 */
export interface PlanDraft {
  config: SweepConfig;
  opts: PlanOptions;
  issues: Issues;
  warnings: string[];
  notes: string[];
  /** The orientation's name, its config and config paths (for issues). */
  oName: string;
  orientation: Orientation;
  oPath: PathSegment[];
  tPath: PathSegment[];
  spec: TopologySpec;
  cluster: ClusterProfile;
  /** The validated-recipe table entry for this model family on this GPU, if any (rule 18). */
  recipe: RecipeConstraint | undefined;
  /** The model's default context: model.defaultContextTokens, else the recipe's. */
  modelDefaultContext: number | undefined;
}

/** Look up the orientation and cluster profile (both must exist) and open the draft. */
export function openDraft(config: SweepConfig, opts: PlanOptions): PlanDraft {
  const issues = new Issues(opts.source);
  const oName = opts.orientation;
  const orientation = config.orientations[oName];
  const cluster = config.clusters[opts.cluster];
  if (orientation === undefined)
    issues.add(
      ['orientations'],
      oName,
      `no orientation "${oName}" (have: ${Object.keys(config.orientations).join(', ')})`,
    );
  if (cluster === undefined)
    issues.add(
      ['clusters'],
      opts.cluster,
      `no cluster profile "${opts.cluster}" (have: ${Object.keys(config.clusters).join(', ')})`,
    );
  issues.throwIfAny();
  if (orientation === undefined || cluster === undefined) throw new Error('unreachable');
  // a disaggregated orientation is planned role by role (plan-disagg.ts), each role as an aggregated draft
  if (orientation.topology === undefined)
    throw new Error(`internal planner error: orientation ${oName} has no aggregated topology (plan it with planSweep)`);
  const oPath = ['orientations', oName];
  const recipe = recipeFor(config.model.family, cluster.gpu);
  return {
    config,
    opts,
    issues,
    warnings: [],
    notes: [],
    oName,
    orientation,
    oPath,
    tPath: [...oPath, 'topology'],
    spec: orientation.topology,
    cluster,
    recipe,
    modelDefaultContext: config.model.defaultContextTokens ?? recipe?.modelDefaultContext,
  };
}
