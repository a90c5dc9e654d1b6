/**
 * `infersweep status [ID] [--json]`: where a sweep stands — phase, every ConcurrencyPoint
 * (status, attempts, result path, live requests/ETA for the running one), every Allocation (job
 * id, nodes, how it ended). Without ID: the most recently started sweep. `--json` prints the
 * `progress` query's result (plus workflowStatus, uiLink, live heartbeat details).
 */
import type { Command } from 'commander';
import { action, out, usageExits, UsageError } from '../ops/cli';
import { describeSweep, latestSweepId, withSession } from '../ops/temporal';
import { statusJson, statusText } from '../ops/render';

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
          withSession(async (s) => {
            const sweepId = id ?? (await latestSweepId(s));
            if (!sweepId)
              throw new UsageError(
                'no sweeps on this Temporal namespace yet; start one with `infersweep sweep --orientation <name>`',
              );
            const view = await describeSweep(s, sweepId);
            out(opts.json ? JSON.stringify(statusJson(view), null, 2) : statusText(view));
          }),
        ),
      ),
  );
}
