/**
 * Finding a sweep's results and writing its report. Temporal (when reachable) says which sweeps
 * belong to an id (an `all` parent's children), where their results are, and how each point and
 * Allocation ended; the results folders hold the numbers. Without Temporal, the folders (and the
 * `progress.json` snapshot a previous run saved) are enough.
 */
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { dataDir } from '@infersweep/orchestrator';
import { PLAN_FILE, REPORT_FILE } from '@infersweep/core';
import type { SweepProgress } from '@infersweep/sweep';
import { UsageError } from '../ops/cli';
import { describeSweep, latestSweepId, openSession, type Session, type SweepView } from '../ops/temporal';
import { loadSweepResults, PROGRESS_SNAPSHOT, type SweepResults } from './records';
import { renderReport, seriesOf } from './html';
import { DEFAULT_X_AXIS, X_AXES, Y_LABEL, type XAxis } from './axes';
import { paretoSvg } from './chart';

export const resultsRoot = (): string => join(dataDir, 'results');

interface Located {
  id: string;
  resultsDir: string;
  progress?: SweepProgress;
  uiLink?: string;
}

/** Results folders on disk for an id (an `…-all-…` parent id matches its siblings by label). */
export function locateOnDisk(id: string, root = resultsRoot()): Located[] {
  const direct = join(root, id);
  if (existsSync(join(direct, PLAN_FILE)) || existsSync(join(direct, 'points'))) return [{ id, resultsDir: direct }];
  const m = /^(sweep-.+?)-all-(.+)$/.exec(id);
  if (m && existsSync(root)) {
    const [, head, tail] = m;
    return readdirSync(root)
      .filter(
        (d) => d.startsWith(`${head}-`) && d.endsWith(`-${tail}`) && d !== id && existsSync(join(root, d, PLAN_FILE)),
      )
      .sort()
      .map((d) => ({ id: d, resultsDir: join(root, d) }));
  }
  return [];
}

/** The newest results folder (by plan.json time). */
export function latestOnDisk(root = resultsRoot()): string | undefined {
  if (!existsSync(root)) return undefined;
  const dirs = readdirSync(root)
    .filter((d) => existsSync(join(root, d, PLAN_FILE)))
    .map((d) => ({ d, t: statSync(join(root, d, PLAN_FILE)).mtimeMs }))
    .sort((a, b) => b.t - a.t);
  return dirs[0]?.d;
}

function fromView(v: SweepView): Located[] {
  const leaves = v.kind === 'all' ? v.children : [v];
  return leaves.map((l) => ({
    id: l.workflowId,
    resultsDir:
      l.progress?.resultsDir ??
      (typeof l.memo.resultsDir === 'string' ? l.memo.resultsDir : join(resultsRoot(), l.workflowId)),
    progress: l.progress,
    uiLink: l.uiLink,
  }));
}

export interface ResolvedSweeps {
  /** the id asked for (a sweep, or an `all` parent) */
  id: string;
  sweeps: SweepResults[];
  uiLinks: Record<string, string>;
  /** where the report goes by default */
  defaultDir: string;
  /** a note when Temporal was not used */
  note?: string;
}

/**
 * The results of `id` (or the latest sweep). Saves each sweep's progress as `progress.json` in
 * its results folder so a later report still shows statuses and allocation history.
 */
export async function resolveSweeps(
  id: string | undefined,
  opts: { session?: Session; latest?: boolean } = {},
): Promise<ResolvedSweeps> {
  let s = opts.session;
  let own = false;
  let note: string | undefined;
  if (!s) {
    try {
      s = await openSession();
      own = true;
    } catch (e) {
      note = `Temporal not reachable (${(e as Error).message.split('\n')[0]}); using the results folders only`;
    }
  }
  try {
    let sweepId = id;
    if (!sweepId) {
      sweepId = s ? await latestSweepId(s).catch(() => undefined) : undefined;
      sweepId ??= latestOnDisk();
      if (!sweepId)
        throw new UsageError(
          `no sweeps found (no workflows, and no results under ${resultsRoot()}); run one with \`infersweep sweep --orientation <name>\``,
        );
    }
    let located: Located[] = [];
    if (s) {
      try {
        located = fromView(await describeSweep(s, sweepId, { queryTimeoutMs: 5000 }));
      } catch (e) {
        note = `${(e as Error).message.split('\n')[0]}; using the results folders only`;
      }
    }
    if (located.length === 0) located = locateOnDisk(sweepId);
    if (located.length === 0) {
      throw new UsageError(
        `no results for sweep ${JSON.stringify(sweepId)} (not on Temporal, nothing under ${resultsRoot()}); list sweeps with \`infersweep list\``,
      );
    }
    const uiLinks: Record<string, string> = {};
    const sweeps = located.map((l) => {
      if (l.progress) {
        try {
          // the report goes to this folder too: a sweep refused before it wrote anything gets one here
          mkdirSync(l.resultsDir, { recursive: true });
          writeFileSync(join(l.resultsDir, PROGRESS_SNAPSHOT), JSON.stringify(l.progress, null, 2));
        } catch {
          // read-only results: the report still renders from the live progress
        }
      }
      if (l.uiLink) uiLinks[l.id] = l.uiLink;
      return loadSweepResults(l.resultsDir, l.progress, l.id);
    });
    const defaultDir = located.length === 1 ? located[0]!.resultsDir : join(resultsRoot(), sweepId);
    return { id: sweepId, sweeps, uiLinks, defaultDir, note };
  } finally {
    if (own && s) await s.close().catch(() => undefined);
  }
}

/** The chart shared as PNG: all orientations together, or the one orientation. */
export function headlineSvg(sweeps: SweepResults[], axis: XAxis = DEFAULT_X_AXIS): string {
  const model = sweeps[0]?.model ?? '';
  return paretoSvg(
    sweeps.map((s) => seriesOf(s, axis)),
    {
      title:
        sweeps.length > 1
          ? `${model}: throughput per GPU vs interactivity`
          : `${model} · ${sweeps[0]?.orientation}: throughput per GPU vs interactivity`,
      xLabel: X_AXES[axis].label,
      yLabel: Y_LABEL,
      id: 'chart-png',
    },
  );
}

export interface WrittenReport {
  html: string;
  png?: string;
  validPoints: number;
  points: number;
}

export async function writeReport(
  r: ResolvedSweeps,
  out?: string,
  png?: string | boolean,
  xAxis: XAxis = DEFAULT_X_AXIS,
): Promise<WrittenReport> {
  const file = resolve(out ?? join(r.defaultDir, REPORT_FILE));
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, renderReport({ sweeps: r.sweeps, outDir: dirname(file), uiLinks: r.uiLinks, xAxis }));
  let pngFile: string | undefined;
  if (png) {
    pngFile = resolve(typeof png === 'string' ? png : file.replace(/\.html?$/, '') + '.png');
    const { svgToPng } = await import('../ops/browser');
    await svgToPng(headlineSvg(r.sweeps, xAxis), pngFile);
  }
  const all = r.sweeps.flatMap((s) => s.points);
  return { html: file, png: pngFile, validPoints: all.filter((p) => p.valid === true).length, points: all.length };
}
