/** What `infersweep report` runs (its options are in ../commands/report.ts). */
import { out, err, UsageError } from '../ops/cli';
import { resolveSweeps, writeReport } from '../report/generate';
import { DEFAULT_X_AXIS, X_AXES, type XAxis } from '../report/axes';

export interface ReportOpts {
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

export async function report(id: string | undefined, opts: ReportOpts): Promise<void> {
  if (!id && !opts.latest) throw new UsageError('which sweep? give its id (see `infersweep list`) or --latest');
  if (id && opts.latest) throw new UsageError(`give either an id (${id}) or --latest, not both`);
  const r = await resolveSweeps(id, { latest: opts.latest });
  if (r.note) err(`note: ${r.note}`);
  const w = await writeReport(r, opts.out, opts.png, xAxisOf(opts.xAxis));
  out(`report: ${w.html}`);
  if (w.png) out(`chart:  ${w.png}`);
  out(`${r.sweeps.length} orientation(s), ${w.points} points, ${w.validPoints} valid`);
}
