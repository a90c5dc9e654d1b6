/** What `infersweep history` runs (its options are in ../commands/history.ts). */
import {
  analyzeWhole,
  evaluatePoint,
  loadHistorySettings,
  openStore,
  rebuildHistory,
  resultsFolders,
  seriesId,
  seriesMatches,
  seriesText,
  pointVerdictsText,
  wholeSeriesText,
  type HistorySettings,
  type HistoryStore,
} from '@infersweep/history';
import { err, out, UsageError } from '../ops/cli';
import { resultsRoot } from '../report/generate';

export interface HistoryOpts {
  root?: string;
  store?: string;
  json?: boolean;
  /** ad-hoc runs enter a scheduled run's baseline (detection.includeAdhoc) */
  includeAdhoc?: boolean;
}

/** The settings and the store the history commands read: flags first, then the worker's settings, then the results root. */
export async function openHistory(
  opts: HistoryOpts,
): Promise<{ settings: HistorySettings; store: HistoryStore; root: string }> {
  const loaded = loadHistorySettings();
  const settings = opts.includeAdhoc ? { ...loaded, detection: { ...loaded.detection, includeAdhoc: true } } : loaded;
  const root = opts.root ?? resultsRoot();
  return { settings, store: await openStore(opts.store ?? settings.store ?? root), root };
}

/** Say on stderr how many stored lines did not validate (a torn write of the file store): their runs are missing. */
function warnSkipped(store: HistoryStore): void {
  if (store.skippedLines > 0)
    err(
      `warning: ${store.skippedLines} line(s) of ${store.where} did not validate and were skipped: their runs are missing (\`infersweep history rebuild\` re-reads them from the results folders)`,
    );
}

async function showSeries(query: string, opts: HistoryOpts): Promise<number> {
  const { settings, store } = await openHistory(opts);
  try {
    const keys = (await store.seriesKeys()).filter((k) => seriesMatches(k, query));
    if (keys.length === 0)
      throw new UsageError(`no series matches ${query} in ${store.where} (see \`infersweep history\`)`);
    const shown = [];
    for (const key of keys.sort((a, b) => seriesId(a).localeCompare(seriesId(b)) || a.concurrency - b.concurrency)) {
      const points = await store.series(key);
      const verdicts = points.map((p) => evaluatePoint(p, points, settings.detection));
      shown.push({ series: seriesId(key), points, verdicts });
      if (!opts.json) {
        out(seriesText(points, verdicts, settings.detection.metrics));
        const newest = points.reduce((a, b) => (b.time > a.time ? b : a));
        const v = verdicts.find((x) => x.runId === newest.runId);
        if (v) out(`newest run ${v.runId}:\n${pointVerdictsText([v])}`);
        out();
      }
    }
    if (opts.json) out(JSON.stringify(shown, null, 2));
    warnSkipped(store);
    return 0;
  } finally {
    await store.close();
  }
}

/** The whole-series pass over every series (or those `query` names), per primary continuous metric. */
async function analyze(query: string | undefined, opts: HistoryOpts): Promise<number> {
  const { settings, store } = await openHistory(opts);
  try {
    const keys = (await store.seriesKeys()).filter((k) => query === undefined || seriesMatches(k, query));
    if (keys.length === 0 && query !== undefined)
      throw new UsageError(`no series matches ${query} in ${store.where} (see \`infersweep history\`)`);
    const metrics = settings.detection.metrics.filter((m) => m !== 'errorRate');
    const shown = [];
    for (const key of keys.sort((a, b) => seriesId(a).localeCompare(seriesId(b)))) {
      const points = await store.series(key);
      for (const m of metrics) {
        const a = analyzeWhole(points, m, settings.detection);
        shown.push(a);
        if (!opts.json) out(wholeSeriesText(a));
      }
    }
    if (opts.json) out(JSON.stringify(shown, null, 2));
    else
      out(
        `\n${shown.reduce((n, a) => n + a.shifts.filter((s) => s.kind === 'drift').length, 0)} drift(s), ${shown.reduce((n, a) => n + a.relocations.filter((r) => r.status !== 'confirmed').length, 0)} nightly change(s) moved or not confirmed, over ${keys.length} series`,
      );
    warnSkipped(store);
    return 0;
  } finally {
    await store.close();
  }
}

async function listSeries(opts: HistoryOpts): Promise<number> {
  const { store } = await openHistory(opts);
  try {
    const keys = await store.seriesKeys();
    if (opts.json)
      out(
        JSON.stringify(
          keys.map((k) => ({ series: seriesId(k), ...k })),
          null,
          2,
        ),
      );
    else if (keys.length === 0)
      out(`no history in ${store.where} (run \`infersweep history rebuild\` to index existing results)`);
    else for (const k of keys.map(seriesId).sort()) out(k);
    warnSkipped(store);
    return 0;
  } finally {
    await store.close();
  }
}

async function rebuild(opts: HistoryOpts): Promise<number> {
  const { settings, store, root } = await openHistory(opts);
  try {
    const r = await rebuildHistory(store, resultsFolders(root), settings);
    for (const s of r.skipped) err(`left out: ${s}`);
    if (r.droppedLines > 0) err(`dropped ${r.droppedLines} line(s) of ${store.where} that did not validate`);
    out(
      `history rebuilt in ${store.where}: ${r.runs} runs, ${r.points} points from ${root} (runs of other results roots kept); ${r.regressions} regressed points across all runs`,
    );
    return 0;
  } finally {
    await store.close();
  }
}

export async function history(
  series: string | undefined,
  prefix: string | undefined,
  opts: HistoryOpts,
): Promise<number> {
  if (series === 'rebuild') return rebuild(opts);
  if (series === 'analyze') return analyze(prefix, opts);
  return series ? showSeries(series, opts) : listSeries(opts);
}
