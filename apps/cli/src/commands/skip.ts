/**
 * `infersweep skip ID --point C [--reason R]`: skip a pending or failed ConcurrencyPoint through
 * the sweep's `skipPoint` update. The workflow's validator refuses points that are running or
 * settled, with a message naming the point's state.
 */
import type { Command } from 'commander';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { skipPointUpdate } from '@infersweep/sweep';
import { action, out, parsePositiveInt, usageExits, ExitWith, EXIT } from '../ops/cli';
import { withSession } from '../ops/temporal';
import { pointLine } from '../ops/render';

export function register(program: Command): void {
  usageExits(
    program
      .command('skip')
      .description('Skip a pending or failed concurrency point of a running sweep')
      .argument('<id>', 'sweep (workflow) id of one orientation')
      .requiredOption('--point <concurrency>', 'the concurrency point to skip, e.g. --point 64')
      .option('--reason <text>', 'why (kept with the point)', 'skipped from the CLI')
      .action(
        action('skip', async (id: string, opts: { point: string; reason: string }) => {
          const concurrency = parsePositiveInt(opts.point, '--point');
          return withSession(async (s) => {
            try {
              const p = await s.client.workflow
                .getHandle(id)
                .executeUpdate(skipPointUpdate, { args: [{ concurrency, reason: opts.reason }] });
              const pt = p.points.find((x) => x.concurrency === concurrency);
              out(`skipped: ${pt ? pointLine(pt) : `c=${concurrency}`}`);
            } catch (e) {
              if (e instanceof WorkflowUpdateFailedError)
                throw new ExitWith(EXIT.failure, `the sweep refused: ${e.cause?.message ?? e.message}`);
              throw e;
            }
          });
        }),
      ),
  );
}
