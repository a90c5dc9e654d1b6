/** What `infersweep results` runs (its options are in ../commands/results.ts). */
import { out, err, UsageError } from '../ops/cli';
import { fmtNum } from '../report/chart';
import { toCsv } from '../report/html';
import { resolveSweeps } from '../report/generate';
import { writeInferencex } from '../report/inferencex';
import { join } from 'node:path';
import type { PointRow, SweepResults } from '../report/records';

const cell = (v: number | null) => (v === null ? '–' : fmtNum(v));

export function resultsTable(sweeps: SweepResults[]): string {
  const lines: string[] = [];
  for (const s of sweeps) {
    lines.push(`${s.sweepId}  (${s.orientation}, ${s.points.length} points, results ${s.resultsDir})`);
    const head = [
      'conc',
      'status',
      'valid',
      'tok/s/GPU',
      'out tok/s/GPU',
      'tok/s/user',
      'E2E-norm P90',
      'goodput %',
      'TTFT p50 ms',
      'E2E p50 ms',
      'requests',
      'attempts',
      'reasons',
    ];
    const rows = s.points.map((p: PointRow) => [
      String(p.concurrency),
      p.status,
      p.valid === undefined ? '–' : p.valid ? 'yes' : 'NO',
      cell(p.totalThroughputPerGpu),
      cell(p.outputThroughputPerGpu),
      cell(p.interactivityP50),
      cell(p.e2eNormInteractivityP90),
      cell(p.goodputAttainment === null ? null : 100 * p.goodputAttainment),
      cell(p.ttftP50Ms),
      cell(p.e2elP50Ms),
      cell(p.requestsProfiled),
      String(p.attempts),
      [...p.reasons, ...(p.lastError && !p.reasons.includes(p.lastError) ? [p.lastError] : [])].join('; '),
    ]);
    const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
    const fmt = (r: string[]) =>
      `  ${r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')}`.trimEnd();
    lines.push(fmt(head));
    for (const r of rows) lines.push(fmt(r));
  }
  return lines.join('\n');
}

/** `--format inferencex`: write the files, say what was left out and what is not comparable (stderr). */
function exportInferencex(
  sweeps: SweepResults[],
  opts: { out?: string; nextToPoints?: boolean; includeInvalid?: boolean },
): void {
  let written = 0;
  let leftOut = 0;
  for (const s of sweeps) {
    const dir = opts.nextToPoints ? undefined : (opts.out ?? join(s.resultsDir, 'inferencex'));
    const w = writeInferencex([s], dir, { includeInvalid: opts.includeInvalid });
    for (const x of w.written) out(x.path);
    for (const x of w.skipped) err(`skipped: ${x}`);
    for (const x of w.written.filter((p) => !p.valid))
      err(`included INVALID: ${x.sweepId} c=${x.concurrency} (its reasons are in the file's warnings)`);
    for (const x of w.leftOutInvalid)
      err(`left out (invalid): ${x.sweepId} c=${x.concurrency}: ${x.reasons.join('; ')}`);
    for (const x of w.notComparable)
      err(
        `warning: ${x.sweepId} (${x.orientation}) did not run InferenceX's workload, its exports are not comparable with InferenceX's results (said in each file's warnings and .infersweep sidecar): ${x.because.join('; ')}`,
      );
    written += w.written.length;
    leftOut += w.leftOutInvalid.length;
  }
  if (leftOut > 0)
    err(
      `left out ${leftOut} invalid point(s): InferenceX's schema has no validity field; --include-invalid exports them with their reasons in warnings`,
    );
  if (written === 0)
    throw new Error(
      leftOut > 0 ? `no valid point to convert (${leftOut} invalid left out)` : 'no point records to convert',
    );
}

export interface ResultsOpts {
  json?: boolean;
  csv?: boolean;
  format?: string;
  out?: string;
  nextToPoints?: boolean;
  includeInvalid?: boolean;
}

export async function results(id: string, opts: ResultsOpts): Promise<void> {
  const format = opts.format ?? (opts.json ? 'json' : opts.csv ? 'csv' : 'table');
  if ((opts.json && opts.csv) || (opts.format !== undefined && (opts.json || opts.csv)))
    throw new UsageError('choose one of --json, --csv and --format');
  if (!['table', 'json', 'csv', 'inferencex'].includes(format))
    throw new UsageError(`--format ${format}: expected table, json, csv or inferencex`);
  if ((opts.out !== undefined || opts.nextToPoints) && format !== 'inferencex')
    throw new UsageError('--out and --next-to-points go with --format inferencex');
  if (opts.out !== undefined && opts.nextToPoints) throw new UsageError('choose one of --out and --next-to-points');
  if (opts.includeInvalid && format !== 'inferencex')
    throw new UsageError('--include-invalid goes with --format inferencex');
  const r = await resolveSweeps(id);
  if (r.note) err(`note: ${r.note}`);
  if (format === 'inferencex') return exportInferencex(r.sweeps, opts);
  if (format === 'csv') process.stdout.write(toCsv(r.sweeps));
  else if (format === 'json') out(JSON.stringify(r.sweeps, null, 2));
  else out(resultsTable(r.sweeps));
}
