/** What `infersweep list` runs (its options are in ../commands/list.ts). */
import { out, parsePositiveInt } from '../ops/cli';
import { listQuery, listSweeps, withSession } from '../ops/temporal';

export interface ListOpts {
  running?: boolean;
  orientation?: string;
  cluster?: string;
  model?: string;
  config?: string;
  limit: string;
  json?: boolean;
}

export async function list(opts: ListOpts): Promise<void> {
  const limit = parsePositiveInt(opts.limit, '--limit');
  const query = listQuery(opts);
  return withSession(async (s) => {
    const rows = await listSweeps(s, query, limit);
    if (opts.json) {
      out(JSON.stringify(rows, null, 2));
      return;
    }
    if (rows.length === 0) {
      out(`no sweeps match (${query})`);
      return;
    }
    const w = Math.max(...rows.map((r) => r.workflowId.length));
    out(
      `${'SWEEP ID'.padEnd(w)}  ${'STATUS'.padEnd(10)}  ${'PHASE'.padEnd(16)}  ${'ORIENTATION'.padEnd(12)}  ${'CLUSTER'.padEnd(8)}  STARTED`,
    );
    for (const r of rows) {
      out(
        `${r.workflowId.padEnd(w)}  ${r.status.padEnd(10)}  ${(r.sweepStatus ?? '').padEnd(16)}  ${(r.orientation ?? '').padEnd(12)}  ${(r.cluster ?? '').padEnd(8)}  ${r.startTime}`,
      );
    }
  });
}
