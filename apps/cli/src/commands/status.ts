/**
 * `infersweep status [ID] [--json]`: where a sweep stands — phase, every ConcurrencyPoint
 * (status, attempts, result path, live requests/ETA for the running one), every Allocation (job
 * id, nodes, how it ended). Without ID: the most recently started sweep. `--json` prints the
 * `progress` query's result (plus workflowStatus, uiLink, live heartbeat details).
 */
import type { Command } from 'commander';
import { action, usageExits } from '../ops/cli';

export function register(program: Command): void {
  usageExits(
    program
      .command('status')
      .description(
        'Show a sweep: phase, points (status, attempts, result path), allocations (job id, nodes, how each ended)',
      )
      .argument('[id]', 'sweep (workflow) id; default: the most recently started sweep')
      .option('--json', 'print the progress query result as one JSON object')
      .action(
        action('status', async (id: string | undefined, opts: { json?: boolean }) =>
          (await import('../actions/status')).status(id, opts),
        ),
      ),
  );
}
