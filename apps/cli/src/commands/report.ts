/**
 * `infersweep report ID|--latest [--out FILE] [--png [FILE]] [--x-axis AXIS]`: one self-contained HTML
 * file — per Orientation the Pareto chart of throughput per GPU vs interactivity (by default
 * InferenceX's P90 E2E-normalized interactivity; `--x-axis itl-p50` for 1 / ITL p50), the point table with
 * validity and reasons, the Allocation history and links to logs. `--png` also saves the chart
 * as a PNG for sharing (rendered by the system Chromium).
 */
import type { Command } from 'commander';
import { action, usageExits } from '../ops/cli';
import { DEFAULT_X_AXIS, X_AXES } from '../report/axes';
import type { ReportOpts } from '../actions/report';

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
        action('report', async (id: string | undefined, opts: ReportOpts) =>
          (await import('../actions/report')).report(id, opts),
        ),
      ),
  );
}
