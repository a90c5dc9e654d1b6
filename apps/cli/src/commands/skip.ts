/**
 * `infersweep skip ID --point C [--reason R]`: skip a pending or failed ConcurrencyPoint through
 * the sweep's `skipPoint` update. The workflow's validator refuses points that are running or
 * settled, with a message naming the point's state.
 */
import type { Command } from 'commander';
import { action, usageExits } from '../ops/cli';
import type { SkipOpts } from '../actions/skip';

export function register(program: Command): void {
  usageExits(
    program
      .command('skip')
      .description('Skip a pending or failed concurrency point of a running sweep')
      .argument('<id>', 'sweep (workflow) id of one orientation')
      .requiredOption('--point <concurrency>', 'the concurrency point to skip, e.g. --point 64')
      .option('--reason <text>', 'why (kept with the point)', 'skipped from the CLI')
      .action(action('skip', async (id: string, opts: SkipOpts) => (await import('../actions/skip')).skip(id, opts))),
  );
}
