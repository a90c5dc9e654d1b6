/**
 * `infersweep compare RUN_A RUN_B [--root DIR] [--store URL] [--json]`: two runs point by point (same
 * series): A, B and the change from A to B per tested metric, what differs in their run context,
 * and B's own verdict against its series' history (baseline, change, confidence, the runs compared).
 * A run is a sweep id in the history store, or a results folder (an id under the results root, or a path).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import {
  METRIC_LABELS,
  contextChanges,
  evaluatePoint,
  extractRun,
  fmtChange,
  fmtNum,
  pointVerdictsText,
  seriesId,
  type HistoryPoint,
  type HistoryStore,
} from '@infersweep/history';
import { action, out, usageExits, UsageError } from '../ops/cli';
import { openHistory, type HistoryOpts } from './history';

async function runPoints(store: HistoryStore, root: string, id: string): Promise<HistoryPoint[]> {
  const stored = await store.run(id);
  if (stored.length) return stored;
  const dir = existsSync(id) ? id : join(root, id);
  const r = existsSync(dir) ? extractRun(dir) : undefined;
  if (!r || r.points.length === 0)
    throw new UsageError(`run ${id}: not in the history (${store.where}) and no results folder at ${dir}`);
  return r.points;
}

export function register(program: Command): void {
  usageExits(
    program
      .command('compare')
      .description('Compare two runs point by point, with the second run’s verdict against its history')
      .argument('<runA>', 'the earlier run: a sweep id or results folder')
      .argument('<runB>', 'the later run')
      .option('--root <dir>', 'the results root (default: the data directory results/)')
      .option('--store <location>', 'a history store (default: the worker settings, else the results root)')
      .option('--json', 'machine-readable output')
      .action(
        action('compare', async (a: string, b: string, opts: HistoryOpts) => {
          const { settings, store, root } = await openHistory(opts);
          try {
            const [pa, pb] = [await runPoints(store, root, a), await runPoints(store, root, b)];
            const byA = new Map(pa.map((p) => [seriesId(p.key), p]));
            const pairs = pb.flatMap((q) => (byA.has(seriesId(q.key)) ? [{ a: byA.get(seriesId(q.key))!, b: q }] : []));
            if (pairs.length === 0)
              throw new UsageError(
                `runs ${a} and ${b} share no series (same config, orientation, model, GPU, concurrency)`,
              );
            const verdicts = [];
            for (const { b: q } of pairs)
              verdicts.push(evaluatePoint(q, await store.series(q.key), settings.detection));
            const rows = pairs.flatMap(({ a: x, b: y }) =>
              settings.detection.metrics.map((m) => {
                const va = x.metrics[m];
                const vb = y.metrics[m];
                return {
                  series: seriesId(y.key),
                  concurrency: y.key.concurrency,
                  metric: m,
                  a: va,
                  b: vb,
                  change: va && vb !== null ? (vb - va) / Math.abs(va) : null,
                };
              }),
            );
            const ctx = contextChanges(pairs[0]!.a.context, pairs[0]!.b.context);
            if (opts.json) {
              out(JSON.stringify({ runA: a, runB: b, contextChanges: ctx, rows, verdicts }, null, 2));
              return 0;
            }
            out(
              `${a} → ${b}: ${ctx.length ? ctx.map((c) => `${c.field} ${c.before} → ${c.after}`).join(', ') : 'same run context'}`,
            );
            const w = Math.max(...rows.map((r) => METRIC_LABELS[r.metric].length));
            for (const r of rows)
              out(
                `  c=${String(r.concurrency).padEnd(4)} ${METRIC_LABELS[r.metric].padEnd(w)}  ${fmtNum(r.a).padStart(8)} → ${fmtNum(r.b).padStart(8)}  ${fmtChange(r.change)}`,
              );
            out(`${b} against its history:`);
            out(pointVerdictsText(verdicts));
            return 0;
          } finally {
            await store.close();
          }
        }),
      ),
  );
}
