/**
 * `infersweep watch ID [--plain]`: live progress of a sweep until it ends (then the report is
 * written) or Ctrl-C detaches. With the embedded default, runs a worker in-process while no
 * other worker polls the sweep's task queue (so watching a detached sweep also continues it).
 */
import type { Command } from 'commander';
import { action, usageExits } from '../ops/cli';
import type { WatchOpts } from '../actions/watch';

export function register(program: Command): void {
  usageExits(
    program
      .command('watch')
      .description('Follow a sweep live until it ends (Ctrl-C detaches); runs a worker in-process if none polls')
      .argument('<id>', 'sweep (workflow) id')
      .option('--plain', 'plain lines even on a terminal')
      .option('--no-report', 'do not write the report when the sweep ends')
      .action(
        action('watch', async (id: string, opts: WatchOpts) => (await import('../actions/watch')).watch(id, opts)),
      ),
  );
}
