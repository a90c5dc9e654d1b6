/**
 * `infersweep history [SERIES] [--root DIR] [--store URL] [--include-adhoc] [--json]`: the series the history holds
 * (without SERIES), or each series SERIES names (its id `config:orientation:model:gpu:c<N>`, or a
 * prefix ending at a `:`), oldest run first, with each run's verdict as of that run and the newest
 * run's comparison. `infersweep history rebuild` replaces the runs found under the results root in the
 * store (nothing else is deleted). `infersweep history analyze [SERIES]` runs the whole-series pass
 * (E-divisive change points, steps and drifts, the nightly's changes placed). Lines of the file store that do not validate are reported on stderr.
 * The store and the detection settings are the worker's (`INFERSWEEP_HISTORY_SETTINGS`) when that
 * file is readable here; otherwise the file store under the results root.
 */
import type { Command } from 'commander';
import { action, usageExits } from '../ops/cli';
import type { HistoryOpts } from '../actions/history';

export function register(program: Command): void {
  usageExits(
    program
      .command('history')
      .description(
        'The history of results per series, with change detection (`history rebuild` re-indexes the results folders, `history analyze` finds drifts and change points over whole series)',
      )
      .argument(
        '[series]',
        'a series id config:orientation:model:gpu:cluster:client:workload:c<N>, or a prefix of one ending at ":"; or `rebuild`; or `analyze`',
      )
      .argument('[prefix]', 'with `analyze`: the series (an id or a prefix ending at ":") to analyse; default all')
      .option('--root <dir>', 'the results root (default: the data directory results/)')
      .option(
        '--store <location>',
        'a history store: a .jsonl file, a folder, or postgresql://… (default: the worker settings, else the results root)',
      )
      .option('--include-adhoc', "let ad-hoc runs into a scheduled run's baseline (default: its schedule's runs only)")
      .option('--json', 'machine-readable output')
      .action(
        action('history', async (series: string | undefined, prefix: string | undefined, opts: HistoryOpts) =>
          (await import('../actions/history')).history(series, prefix, opts),
        ),
      ),
  );
}
