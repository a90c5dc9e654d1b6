/**
 * `infersweep logs ID [--node N] [--lines N] [--follow]`: the server logs of a sweep, one file per
 * node rank. While the server runs they are read live from the cluster's shared storage (over
 * the cluster profile's login host); once captured they are in `<resultsDir>/logs/`.
 */
import type { Command } from 'commander';
import { action, usageExits } from '../ops/cli';
import type { LogsOpts } from '../actions/logs';

export function register(program: Command): void {
  usageExits(
    program
      .command('logs')
      .description('Show the server logs of a sweep (live from the cluster, or the captured copies)')
      .argument('<id>', 'sweep id')
      .option('--node <name|rank>', 'only this node (name like node2, or rank number)')
      .option('--lines <n>', 'last N lines of each file', '100')
      .option('--follow', 'keep printing new lines (tail -F on the login host) until Ctrl-C')
      .option('--captured', 'only the copies captured into the results folder')
      .action(action('logs', async (id: string, opts: LogsOpts) => (await import('../actions/logs')).logs(id, opts))),
  );
}
