/**
 * `infersweep list [--running] [--orientation O] [--cluster C] [--model M] [--config N] [--limit N] [--json]`:
 * sweeps on the namespace, newest first, filtered by the Infersweep* search attributes.
 */
import type { Command } from 'commander';
import { action, out, parsePositiveInt, usageExits } from '../ops/cli';
import { listQuery, listSweeps, withSession } from '../ops/temporal';

interface ListOpts {
  running?: boolean;
  orientation?: string;
  cluster?: string;
  model?: string;
  config?: string;
  limit: string;
  json?: boolean;
}

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
      .action(
        action('list', async (opts: ListOpts) => {
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
        }),
      ),
  );
}
