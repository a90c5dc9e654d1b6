/**
 * `infersweep plan --orientation <name|all> [--config FILE] [--cluster PROFILE] [--points 4,8] [--json]`
 * Prints the launch plan without touching a cluster. `--json` prints one plan object
 * (SweepPlan, libs/topology), or for `--orientation all` a JSON array of plans in config order.
 * A bad config exits 2 with the error on stderr and prints no plan.
 */
import type { Command } from 'commander';
import { DEFAULT_CLUSTER, DEFAULT_CONFIG } from '@infersweep/core';
import { action } from '../ops/cli';
import type { PlanCliOptions } from '../ops/plans';

export function register(program: Command): void {
  program
    .command('plan')
    .description('Print the launch plan for an orientation (no cluster needed)')
    .requiredOption('-o, --orientation <name>', 'orientation name, or "all"')
    .option('-c, --config <file>', 'sweep config', DEFAULT_CONFIG)
    .option('--cluster <profile>', 'cluster profile', DEFAULT_CLUSTER)
    .option('--points <list>', 'only these concurrency points, e.g. 4,8')
    .option('--json', 'print JSON (one plan object; an array of plans for --orientation all)')
    .option('--force', 'plan even when the capacity check refuses (weights or one served-context request do not fit)')
    .action(action('plan', async (opts: PlanCliOptions) => (await import('../actions/plan')).plan(opts)));
}
