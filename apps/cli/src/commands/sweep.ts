/**
 * `infersweep sweep --orientation <name|all> [--config FILE] [--cluster PROFILE] [--points 16,32]
 *                  [--label L] [--detach] [--json]`
 * Validates and plans (a bad config prints what `plan` prints and exits 2, nothing started),
 * starts the durable sweep, prints its id and Web UI link, then shows live progress until it ends
 * and writes the report. Ctrl-C detaches. `--detach --json` prints one JSON object and returns.
 */
import type { Command } from 'commander';
import { DEFAULT_CLUSTER, DEFAULT_CONFIG } from '@infersweep/core';
import { action, usageExits } from '../ops/cli';
import type { SweepOpts } from '../actions/sweep';

export function register(program: Command): void {
  usageExits(
    program
      .command('sweep')
      .description('Plan, start and follow a durable sweep (Ctrl-C detaches; the sweep keeps its state on Temporal)')
      .requiredOption(
        '-o, --orientation <name>',
        'orientation name, or "all" (one child sweep per orientation, one after another)',
      )
      .option('-c, --config <file>', 'sweep config', DEFAULT_CONFIG)
      .option('--cluster <profile>', 'cluster profile', DEFAULT_CLUSTER)
      .option('--points <list>', 'only these concurrency points, e.g. 16,32')
      .option('--label <label>', 'run label, part of the sweep id (default: a UTC timestamp)')
      .option('--detach', 'start and return (no progress view)')
      .option(
        '--json',
        'machine-readable: one JSON object {sweepId, uiLink, …} on stdout (progress, if followed, on stderr)',
      )
      .addHelpText(
        'after',
        `
Temporal: TEMPORAL_ADDRESS (+ TEMPORAL_NAMESPACE, TEMPORAL_TLS, TEMPORAL_API_KEY) selects a deployed
cluster whose workers must be running. Without it the local dev server is used (started with the
local stack if down) and, when no worker polls the cluster's task queue, one runs in this process.

Examples:
  infersweep sweep --orientation balanced
  infersweep sweep --orientation all --label nightly-1 --detach --json`,
      )
      .action(action('sweep', async (opts: SweepOpts) => (await import('../actions/sweep')).runSweep(opts))),
  );
}
