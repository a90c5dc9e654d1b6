/**
 * `infersweep results ID [--json|--csv|--format inferencex [--out DIR|--next-to-points] [--include-invalid]]`:
 * the per-point results of a sweep (or of every orientation of an `all` sweep). Table by default;
 * `--csv` one row per point (RFC 4180); `--json` an array of sweeps with their points and
 * allocations; `--format inferencex` writes InferenceX aggregated agentic results of the valid points
 * (`<name>_conc<N>.json`) into `<resultsDir>/inferencex/` (or `--out`, or next to each point).
 */
import type { Command } from 'commander';
import { action, usageExits } from '../ops/cli';
import type { ResultsOpts } from '../actions/results';

export function register(program: Command): void {
  usageExits(
    program
      .command('results')
      .description('Print the per-point results of a sweep (table, --csv or --json)')
      .argument('<id>', 'sweep id (one orientation, or the parent of --orientation all)')
      .option('--json', 'print JSON: an array of sweeps with points and allocations')
      .option('--csv', 'print CSV, one row per point')
      .option(
        '--format <format>',
        'table (default), json, csv, or inferencex: write InferenceX aggregated agentic results (<name>_conc<N>.json)',
      )
      .option('--out <dir>', 'with --format inferencex: the folder to write into (default <resultsDir>/inferencex)')
      .option('--next-to-points', 'with --format inferencex: write each file next to its point record (points/c<N>/)')
      .option(
        '--include-invalid',
        'with --format inferencex: export invalid points too, their reasons in the warnings field (left out by default)',
      )
      .action(
        action('results', async (id: string, opts: ResultsOpts) =>
          (await import('../actions/results')).results(id, opts),
        ),
      ),
  );
}
