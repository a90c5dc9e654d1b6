/**
 * `infersweep snapshot run FILE [--label L] [--task-queue Q] [--wait] [--json]`: plan every cell of a
 * snapshot config (libs/topology/src/config/snapshot.ts) now and start the snapshot: one workflow
 * whose cells run as sweeps on their clusters' task queues within the window.
 * `infersweep snapshot schedule FILE --cron EXPR`: the same as a Temporal Schedule (plan frozen now).
 * `infersweep snapshot retry ID CELL`: an operator's answer to a cell awaiting one.
 * `infersweep status ID` shows a snapshot's headline and cells.
 */
import type { Command } from 'commander';
import { action, usageExits } from '../ops/cli';
import type { RunOpts } from '../actions/snapshot';

export function register(program: Command): void {
  const snapshot = usageExits(
    program
      .command('snapshot')
      .description('A matrix of sweeps (configs × orientations × clusters) as one batch within a window')
      .addHelpText(
        'after',
        `
The snapshot file (see docs/snapshots.md): name, windowSeconds, retryEverySeconds, policy, matrix rows
{config, orientations, clusters}. A cluster that cannot allocate delays its cells within the window;
cells still open when it ends are reported not run. \`infersweep status ID\` shows the headline.

Examples:
  infersweep snapshot run configs/snapshot-two-clusters.yaml --wait
  infersweep snapshot schedule configs/snapshot-two-clusters.yaml --cron "0 2 * * 6"
  infersweep snapshot retry snapshot-weekly-20261205-020000 two-clusters-local-single-node-west`,
      ),
  );
  usageExits(
    snapshot
      .command('run')
      .description('Plan every cell now and start the snapshot')
      .argument('<file>', 'snapshot config (YAML)')
      .option('--label <label>', 'run label, part of the workflow id (default: a UTC timestamp)')
      .option('--task-queue <name>', "task queue of the snapshot workflow itself (default: its first cluster's)")
      .option('--wait', 'wait until the snapshot completes and print its headline (exit 3 unless every cell is valid)')
      .option('--json', 'print one JSON object')
      .action(
        action('snapshot run', async (file: string, opts: RunOpts) =>
          (await import('../actions/snapshot')).run(file, opts),
        ),
      ),
  );
  usageExits(
    snapshot
      .command('schedule')
      .description('Create a Temporal Schedule that runs the snapshot (plan frozen now)')
      .argument('<file>', 'snapshot config (YAML)')
      .requiredOption('--cron <expr>', 'cron expression, e.g. "0 2 * * 6" (02:00 every Saturday)')
      .option('--timezone <tz>', 'IANA time zone of the cron expression', 'UTC')
      .option('--name <name>', "schedule name (default: the snapshot's name); id infersweep-snapshot-<name>")
      .action(
        action('snapshot schedule', async (file: string, opts: { cron: string; timezone: string; name?: string }) =>
          (await import('../actions/snapshot')).schedule(file, opts),
        ),
      ),
  );
  usageExits(
    snapshot
      .command('retry')
      .description('Answer a cell awaiting an operator (policy operator): try it again now')
      .argument('<id>', 'snapshot (workflow) id')
      .argument('<cell>', 'cell id, as `infersweep status ID` lists it')
      .action(
        action('snapshot retry', async (id: string, cell: string) =>
          (await import('../actions/snapshot')).retry(id, cell),
        ),
      ),
  );
}
