/** What `infersweep compare` runs (its options are in ../commands/compare.ts). */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
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
import { out, UsageError } from '../ops/cli';
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

export async function compare(a: string, b: string, opts: HistoryOpts): Promise<number> {
  const { settings, store, root } = await openHistory(opts);
  try {
    const [pa, pb] = [await runPoints(store, root, a), await runPoints(store, root, b)];
    const byA = new Map(pa.map((p) => [seriesId(p.key), p]));
    const pairs = pb.flatMap((q) => (byA.has(seriesId(q.key)) ? [{ a: byA.get(seriesId(q.key))!, b: q }] : []));
    if (pairs.length === 0)
      throw new UsageError(`runs ${a} and ${b} share no series (same config, orientation, model, GPU, concurrency)`);
    const verdicts = [];
    for (const { b: q } of pairs) verdicts.push(evaluatePoint(q, await store.series(q.key), settings.detection));
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
}
