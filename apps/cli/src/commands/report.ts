/**
 * `infersweep report ID|--latest [--out FILE] [--png [FILE]] [--x-axis AXIS]`: one self-contained HTML
 * file — per Orientation the Pareto chart of throughput per GPU vs interactivity (by default
 * InferenceX's P90 E2E-normalized interactivity; `--x-axis itl-p50` for 1 / ITL p50), the point table with
 * validity and reasons, the Allocation history and links to logs. `--png` also saves the chart
 * as a PNG for sharing (rendered by the system Chromium).
 */
import type { Command } from 'commander';
import { action, out, err, usageExits, UsageError } from '../ops/cli';
import { resolveSweeps, writeReport } from '../report/generate';
import { DEFAULT_X_AXIS, X_AXES, type XAxis } from '../report/html';

interface ReportOpts {
  latest?: boolean;
  out?: string;
  png?: string | boolean;
  xAxis?: string;
}

function xAxisOf(v: string | undefined): XAxis {
  if (v === undefined) return DEFAULT_X_AXIS;
  if (v in X_AXES) return v as XAxis;
  throw new UsageError(
    `--x-axis ${v} is not an axis: give ${Object.keys(X_AXES).join(' or ')} (e.g. --x-axis ${DEFAULT_X_AXIS})`,
  );
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
      .option(
        '--x-axis <axis>',
        `the chart's interactivity: ${Object.keys(X_AXES).join(' or ')} (default ${DEFAULT_X_AXIS}, InferenceX's AgentX axis)`,
      )
      .action(
        action('report', async (id: string | undefined, opts: ReportOpts) => {
          if (!id && !opts.latest) throw new UsageError('which sweep? give its id (see `infersweep list`) or --latest');
          if (id && opts.latest) throw new UsageError(`give either an id (${id}) or --latest, not both`);
          const r = await resolveSweeps(id, { latest: opts.latest });
          if (r.note) err(`note: ${r.note}`);
          const w = await writeReport(r, opts.out, opts.png, xAxisOf(opts.xAxis));
          out(`report: ${w.html}`);
          if (w.png) out(`chart:  ${w.png}`);
          out(`${r.sweeps.length} orientation(s), ${w.points} points, ${w.validPoints} valid`);
        }),
      ),
  );
}
