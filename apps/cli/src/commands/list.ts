/**
 * `infersweep list [--running] [--orientation O] [--cluster C] [--model M] [--config N] [--limit N] [--json]`:
 * sweeps on the namespace, newest first, filtered by the Infersweep* search attributes.
 */
import type { Command } from 'commander';
import { action, usageExits } from '../ops/cli';
import type { ListOpts } from '../actions/list';

export function register(program: Command): void {
  usageExits(
    program
      .command('list')
      .description('List sweeps (newest first), filtered by search attributes')
      .option('--running', 'only running sweeps')
      .option('--orientation <name>', 'only this orientation (InfersweepOrientation; "all" for the parent workflows)')
      .option('--cluster <profile>', 'only this cluster profile (InfersweepCluster)')
      .option('--model <name>', 'only this served model (InfersweepModel)')
      .option('--config <name>', 'only this config name (InfersweepConfig)')
      .option('--limit <n>', 'at most this many sweeps', '50')
      .option('--json', 'print a JSON array')
      .action(action('list', async (opts: ListOpts) => (await import('../actions/list')).list(opts))),
  );
}
