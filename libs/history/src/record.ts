/**
 * The end of a sweep: its points into the history store, the run's verdict against the history, the
 * verdict next to the results (`<resultsDir>/history.json`, which the report reads) and, when the
 * worker's settings name one, a notification. Settings belong to the worker, never to the sweep
 * input: `INFERSWEEP_HISTORY_SETTINGS` names a YAML or JSON file ({@link historySettingsSchema});
 * a webhook URL or a store URL with a password stays in that file on the worker's host.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { detectionSettingsSchema } from './detect';
import { extractRun } from './extract';
import { seriesId, type HistoryPoint, type HistoryStore } from './schema';
import { openStore } from './store';
import { evaluateRun, regressionLabel, runVerdictSchema, type RunVerdict } from './verdict';
import { verdictText } from './render';

/** The verdict file inside a results folder. */
export const VERDICT_FILE = 'history.json';
export const HISTORY_SETTINGS_ENV = 'INFERSWEEP_HISTORY_SETTINGS';

export const historySettingsSchema = z
  .object({
    /** `postgresql://…` or a file path; default: a file under the sweep's results root (the results folder's parent) */
    store: z.string().min(1).optional(),
    detection: detectionSettingsSchema.default(detectionSettingsSchema.parse({})),
    notify: z
      .object({
        /** argv of a command run without a shell; the verdict JSON arrives on its stdin */
        command: z.array(z.string().min(1)).min(1).optional(),
        /** a URL the verdict JSON is POSTed to */
        webhook: z.string().url().optional(),
        /** `regression`: only when the run has one (default); `always`: every run */
        on: z.enum(['regression', 'always']).default('regression'),
      })
      .strict()
      .optional(),
  })
  .strict();
export type HistorySettings = z.infer<typeof historySettingsSchema>;

/** The worker's history settings: the file `INFERSWEEP_HISTORY_SETTINGS` names, or the defaults. */
export function loadHistorySettings(env: NodeJS.ProcessEnv = process.env): HistorySettings {
  const file = env[HISTORY_SETTINGS_ENV];
  if (!file) return historySettingsSchema.parse({});
  const text = readFileSync(file, 'utf8');
  const raw: unknown = file.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  const r = historySettingsSchema.safeParse(raw ?? {});
  if (!r.success)
    throw new Error(
      `${HISTORY_SETTINGS_ENV}=${file}: ${r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  return r.data;
}

/** Where the store of a results folder is: the settings' store, else a file under its results root. */
export const storeLocation = (settings: Pick<HistorySettings, 'store'>, resultsDir: string): string =>
  settings.store ?? dirname(resultsDir.replace(/\/+$/, ''));

/** The verdict of every point of a run, each against its whole stored series. */
export async function verdictFromStore(
  store: HistoryStore,
  runId: string,
  points: readonly HistoryPoint[],
  settings: HistorySettings,
): Promise<RunVerdict> {
  const series = new Map<string, HistoryPoint[]>();
  for (const p of points) series.set(seriesId(p.key), await store.series(p.key));
  return evaluateRun(runId, points, (p) => series.get(seriesId(p.key)) ?? [], settings.detection);
}

function writeAtomic(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}`;
  writeFileSync(tmp, text);
  renameSync(tmp, file);
}

/** The verdict a results folder holds, or undefined (no verdict yet, or one that does not validate). */
export function readVerdict(resultsDir: string): RunVerdict | undefined {
  const file = join(resultsDir, VERDICT_FILE);
  if (!existsSync(file)) return undefined;
  try {
    const r = runVerdictSchema.safeParse(JSON.parse(readFileSync(file, 'utf8')));
    return r.success ? r.data : undefined;
  } catch {
    return undefined;
  }
}

export interface RecordedRun {
  verdict: RunVerdict;
  /** `none` or N: the InfersweepRegression search attribute */
  label: string;
  store: string;
  skipped: string[];
  notified?: string;
}

/** Record the run in `resultsDir`: store its points, judge it, write its verdict, notify. */
export async function recordRun(
  resultsDir: string,
  settings: HistorySettings = loadHistorySettings(),
): Promise<RecordedRun> {
  const run = extractRun(resultsDir);
  const store = await openStore(storeLocation(settings, resultsDir));
  let verdict: RunVerdict;
  try {
    await store.putRun(run.runId, run.points);
    verdict = await verdictFromStore(store, run.runId, run.points, settings);
  } finally {
    await store.close();
  }
  writeAtomic(join(resultsDir, VERDICT_FILE), JSON.stringify(verdict, null, 2));
  const out: RecordedRun = { verdict, label: regressionLabel(verdict), store: store.where, skipped: run.skipped };
  const n = settings.notify;
  // a notification that fails is reported, never a reason to record the run again
  if (n && (n.on === 'always' || verdict.regressions > 0))
    out.notified = await notify(n, verdict).catch(
      (e: unknown) => `failed: ${e instanceof Error ? e.message : String(e)}`,
    );
  return out;
}

/** Run the notification command and/or POST the webhook; says what was notified (no URL: it may hold a token). */
async function notify(n: NonNullable<HistorySettings['notify']>, verdict: RunVerdict): Promise<string> {
  const body = JSON.stringify({ ...verdict, text: verdictText(verdict) });
  const done: string[] = [];
  if (n.command) {
    const [cmd, ...args] = n.command;
    await new Promise<void>((resolve, reject) => {
      const child = execFile(cmd!, args, { timeout: 60_000 }, (err) =>
        err ? reject(new Error(`notification command ${cmd}: ${err.message}`)) : resolve(),
      );
      // a command that exits without reading its input closes the pipe under the write: its exit status (the
      // callback above) says how it went; the EPIPE must not become an uncaught exception of the worker
      child.stdin?.on('error', () => undefined);
      child.stdin?.end(body);
    });
    done.push(`command ${cmd}`);
  }
  if (n.webhook) {
    const res = await fetch(n.webhook, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      signal: AbortSignal.timeout(30_000),
    });
    if (!res.ok) throw new Error(`notification webhook on ${new URL(n.webhook).host}: HTTP ${res.status}`);
    done.push(`webhook on ${new URL(n.webhook).host}`);
  }
  return done.join(', ');
}

/**
 * Rebuild a store from the results folders under `resultsRoot`: every run's points, in time order,
 * each run's verdict recomputed against what was stored before it (`history.json` rewritten).
 */
export async function rebuildHistory(
  store: HistoryStore,
  folders: readonly string[],
  settings: HistorySettings,
): Promise<{ runs: number; points: number; regressions: number; skipped: string[] }> {
  const runs = folders.map((d) => extractRun(d)).filter((r) => r.points.length > 0 || r.skipped.length > 0);
  const skipped = runs.flatMap((r) => r.skipped);
  const timed = runs
    .filter((r) => r.points.length > 0)
    .sort((a, b) => a.points[0]!.time.localeCompare(b.points[0]!.time));
  await store.clear();
  let points = 0;
  let regressions = 0;
  for (const r of timed) {
    await store.putRun(r.runId, r.points);
    points += r.points.length;
    const v = await verdictFromStore(store, r.runId, r.points, settings);
    regressions += v.regressions;
    writeAtomic(join(r.points[0]!.resultsDir, VERDICT_FILE), JSON.stringify(v, null, 2));
  }
  return { runs: timed.length, points, regressions, skipped };
}
