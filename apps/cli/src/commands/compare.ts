/**
 * `infersweep compare RUN_A RUN_B [--root DIR] [--store URL] [--json]`: two runs point by point (same
 * series): A, B and the change from A to B per tested metric, what differs in their run context,
 * and B's own verdict against its series' history (baseline, change, confidence, the runs compared).
 * A run is a sweep id in the history store, or a results folder (an id under the results root, or a path).
 */
import type { Command } from 'commander';
import { action, usageExits } from '../ops/cli';
import type { HistoryOpts } from '../actions/history';

export function register(program: Command): void {
  usageExits(
    program
      .command('compare')
      .description('Compare two runs point by point, with the second run’s verdict against its history')
      .argument('<runA>', 'the earlier run: a sweep id or results folder')
      .argument('<runB>', 'the later run')
      .option('--root <dir>', 'the results root (default: the data directory results/)')
      .option('--store <location>', 'a history store (default: the worker settings, else the results root)')
      .option('--json', 'machine-readable output')
      .action(
        action('compare', async (a: string, b: string, opts: HistoryOpts) =>
          (await import('../actions/compare')).compare(a, b, opts),
        ),
      ),
  );
}
