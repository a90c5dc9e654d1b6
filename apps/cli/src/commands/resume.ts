/**
 * `infersweep resume ID [--detach]`:
 *  - a sweep waiting for an operator (allocation attempts exhausted): the `retryNow` update;
 *  - a running sweep: nothing to resume, it is followed;
 *  - a sweep that ended failed, cancelled, terminated or aborted: started again under the same id
 *    with the same frozen input (read from its history); points with a valid result on disk are
 *    not re-run, so it continues at the first unfinished point.
 * Then follows it like `watch` (running a worker in-process when none polls).
 */
import type { Command } from 'commander';
import { action, usageExits } from '../ops/cli';
import type { ResumeOpts } from '../actions/resume';

export function register(program: Command): void {
  usageExits(
    program
      .command('resume')
      .description(
        'Resume a sweep: retry now if it waits for an operator; restart an ended one with its frozen plan (finished points are kept)',
      )
      .argument('<id>', 'sweep (workflow) id')
      .option('--reason <text>', 'why (recorded with the retryNow update)', 'resumed from the CLI')
      .option('--detach', 'do not follow the sweep afterwards')
      .action(
        action('resume', async (id: string, opts: ResumeOpts) => (await import('../actions/resume')).resume(id, opts)),
      ),
  );
}
