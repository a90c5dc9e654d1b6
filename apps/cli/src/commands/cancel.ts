/**
 * `infersweep cancel ID [--abort] [--reason R]`: stop a sweep. Default: a Temporal cancellation
 * request (the workflow's non-cancellable cleanup captures logs and releases the Allocation).
 * `--abort`: the graceful `abort` update (the current point is abandoned, cleanup runs, the sweep
 * ends as aborted). Either way the Slurm job is released by the workflow, not by the CLI.
 */
import type { Command } from 'commander';
import { action, usageExits } from '../ops/cli';
import type { CancelOpts } from '../actions/cancel';

export function register(program: Command): void {
  usageExits(
    program
      .command('cancel')
      .description('Cancel a sweep (its cleanup releases the allocation); --abort uses the graceful abort update')
      .argument('<id>', 'sweep (workflow) id')
      .option('--abort', 'send the abort update instead of a cancellation request')
      .option('--reason <text>', 'why (recorded in the sweep)', 'cancelled from the CLI')
      .action(
        action('cancel', async (id: string, opts: CancelOpts) => (await import('../actions/cancel')).cancel(id, opts)),
      ),
  );
}
