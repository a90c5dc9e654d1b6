/**
 * `infersweep cancel ID [--abort] [--reason R]`: stop a sweep. Default: a Temporal cancellation
 * request (the workflow's non-cancellable cleanup captures logs and releases the Allocation).
 * `--abort`: the graceful `abort` update (the current point is abandoned, cleanup runs, the sweep
 * ends as aborted). Either way the Slurm job is released by the workflow, not by the CLI.
 */
import type { Command } from 'commander';
import { abortUpdate } from '@infersweep/sweep';
import { action, out, usageExits, ExitWith, EXIT } from '../ops/cli';
import { describeSweep, withSession } from '../ops/temporal';

export function register(program: Command): void {
  usageExits(
    program
      .command('cancel')
      .description('Cancel a sweep (its cleanup releases the allocation); --abort uses the graceful abort update')
      .argument('<id>', 'sweep (workflow) id')
      .option('--abort', 'send the abort update instead of a cancellation request')
      .option('--reason <text>', 'why (recorded in the sweep)', 'cancelled from the CLI')
      .action(
        action('cancel', async (id: string, opts: { abort?: boolean; reason: string }) =>
          withSession(async (s) => {
            const view = await describeSweep(s, id, { query: false, children: false });
            if (view.status !== 'RUNNING')
              throw new ExitWith(EXIT.failure, `sweep ${id} is already ${view.status}; nothing to cancel`);
            const h = s.client.workflow.getHandle(id);
            if (opts.abort) {
              if (view.kind !== 'sweep')
                throw new ExitWith(
                  EXIT.usage,
                  `--abort works on one orientation's sweep; ${id} is a parent of several — cancel it without --abort (its children clean up), or abort each child`,
                );
              const p = await h.executeUpdate(abortUpdate, { args: [{ reason: opts.reason }] });
              out(`abort requested for ${id} (phase ${p.phase}); cleanup runs, then the sweep ends as aborted`);
            } else {
              await h.cancel();
              out(
                `cancellation requested for ${id}; the sweep captures logs and releases its allocation before it ends`,
              );
            }
            out(`follow it: infersweep watch ${id}    (${view.uiLink})`);
          }),
        ),
      ),
  );
}
