/**
 * `infersweep report ID|--latest [--out FILE] [--png [FILE]]`: one self-contained HTML file —
 * per Orientation the Pareto chart of throughput per GPU vs interactivity, the point table with
 * validity and reasons, the Allocation history and links to logs. `--png` also saves the chart
 * as a PNG for sharing (rendered by the system Chromium).
 */
import type { Command } from 'commander';
import { action, out, err, usageExits, UsageError } from '../ops/cli';
import { resolveSweeps, writeReport } from '../report/generate';

interface ReportOpts {
  latest?: boolean;
  out?: string;
  png?: string | boolean;
}

export function register(program: Command): void {
  usageExits(
    program
      .command('report')
      .description('Write the HTML results report (Pareto chart, point table, allocation history, log links)')
      .argument('[id]', 'sweep id (one orientation, or the parent of --orientation all)')
      .option('--latest', 'the most recently started sweep')
      .option('--out <file>', 'where to write the HTML (default <resultsDir>/report.html)')
      .option('--png [file]', 'also save the chart as PNG (default: next to the HTML)')
      .action(
        action('report', async (id: string | undefined, opts: ReportOpts) => {
          if (!id && !opts.latest) throw new UsageError('which sweep? give its id (see `infersweep list`) or --latest');
          if (id && opts.latest) throw new UsageError(`give either an id (${id}) or --latest, not both`);
          const r = await resolveSweeps(id, { latest: opts.latest });
          if (r.note) err(`note: ${r.note}`);
          const w = await writeReport(r, opts.out, opts.png);
          out(`report: ${w.html}`);
          if (w.png) out(`chart:  ${w.png}`);
          out(`${r.sweeps.length} orientation(s), ${w.points} points, ${w.validPoints} valid`);
        }),
      ),
  );
}
