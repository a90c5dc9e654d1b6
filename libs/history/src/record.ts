/**
 * The end of a sweep: its points into the history store, the run's verdict against the history, the
 * verdict next to the results (`<resultsDir>/history.json`, which the report reads) and, when the
 * worker's settings name one, a notification. Settings belong to the worker, never to the sweep
 * input: `INFERSWEEP_HISTORY_SETTINGS` names a YAML or JSON file ({@link historySettingsSchema});
 * a webhook URL or a store URL with a password stays in that file on the worker's host.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { detectionSettingsSchema } from './detect';
import { extractRun, ORIGIN_FILE, readOrigin, type PointFailures, type RunOrigin } from './extract';
import { seriesId, type HistoryPoint, type HistoryStore } from './schema';
import { hookEnv, runHook } from './hook';
import { openStore } from './store';
import {
  evaluateNight,
  evaluateRun,
  hasFindings,
  regressionLabel,
  runVerdictSchema,
  type NightRun,
  type RunVerdict,
} from './verdict';
import { verdictText } from './render';
import { confirmationRequest, confirmationText, confirmSettingsSchema, type ConfirmRequest } from './confirm';
import type { ConfirmResult } from '@infersweep/sweep';

/** The verdict file inside a results folder. */
export const VERDICT_FILE = 'history.json';
/** The marker a notification leaves in its results folder: a retried recordHistory does not notify again. */
export const NOTIFIED_FILE = 'history-notified.json';
/** The marker of the confirmation's notification (./confirm.ts), once per flagged run. */
export const CONFIRM_NOTIFIED_FILE = 'history-confirm-notified.json';
export const HISTORY_SETTINGS_ENV = 'INFERSWEEP_HISTORY_SETTINGS';

export const historySettingsSchema = z
  .object({
    /** `postgresql://…` or a file path; default: a file under the sweep's results root (the results folder's parent) */
    store: z.string().min(1).optional(),
    detection: detectionSettingsSchema.default(detectionSettingsSchema.parse({})),
    notify: z
      .object({
        /**
         * argv of a command run without a shell; the verdict JSON arrives on its stdin, the run id in
         * INFERSWEEP_RUN_ID; its environment is PATH, HOME, LANG and TZ only (./hook.ts)
         */
        command: z.array(z.string().min(1)).min(1).optional(),
        /** the command's bound: then its whole process group is killed (SIGTERM, SIGKILL 2 s later) */
        timeoutSeconds: z.number().positive().default(60),
        /** a URL the verdict JSON is POSTed to */
        webhook: z.string().url().optional(),
        /** `regression`: only when the run has a finding, a regression or an unmeasured point (default); `always`: every run */
        on: z.enum(['regression', 'always']).default('regression'),
      })
      .strict()
      .optional(),
    /** a flagged regression is confirmed or cleared by a paired A/B, then bisected (./confirm.ts) */
    confirm: confirmSettingsSchema.default(confirmSettingsSchema.parse({})),
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
  /** `none`, N, `unmeasured:M` or `N,unmeasured:M`: the InfersweepRegression search attribute */
  label: string;
  store: string;
  skipped: string[];
  notified?: string;
  /** the paired A/B the verdict asks for (a regression, confirmation on) */
  confirm?: ConfirmRequest;
}

/**
 * Whether the verdict notifies when it is recorded: `always`, or a finding — except a regression the A/B
 * will confirm first (`confirm.notifyOn: confirmed`, the default), which notifies once confirmed
 * ({@link notifyConfirmation}); an unmeasured point notifies at once.
 */
export function notifiesAtRecord(
  settings: Pick<HistorySettings, 'notify' | 'confirm'>,
  verdict: RunVerdict,
  confirming: boolean,
): boolean {
  const n = settings.notify;
  if (!n) return false;
  if (n.on === 'always') return true;
  if (!hasFindings(verdict)) return false;
  const deferred = confirming && settings.confirm.notifyOn === 'confirmed' && (verdict.unmeasured ?? 0) === 0;
  return !deferred;
}

/** What a run cost and what broke, per point (by concurrency): stored with the point. */
export type PointCosts = Readonly<Record<number, Pick<HistoryPoint, 'gpuSeconds' | 'failureClasses'>>>;

/** A results folder's run, its failed points with their reasons and each point's costs. */
function runOf(resultsDir: string, failures: PointFailures, costs: PointCosts) {
  const extracted = extractRun(resultsDir, failures);
  return { ...extracted, points: extracted.points.map((p) => ({ ...p, ...costs[p.key.concurrency] })) };
}

/**
 * Record the run in `resultsDir`: store its points (failed ones too, with the reason `failures` gives),
 * judge it, write its verdict, notify.
 */
export async function recordRun(
  resultsDir: string,
  settings: HistorySettings = loadHistorySettings(),
  failures: PointFailures = {},
  costs: PointCosts = {},
): Promise<RecordedRun> {
  const run = runOf(resultsDir, failures, costs);
  const store = await openStore(storeLocation(settings, resultsDir));
  let verdict: RunVerdict;
  let confirm: ConfirmRequest | undefined;
  try {
    await store.putRun(run.runId, run.points);
    verdict = withSkipped(await verdictFromStore(store, run.runId, run.points, settings), store);
    confirm = await confirmationRequest(
      verdict,
      run.points,
      store,
      settings.confirm,
      settings.detection.minRelativeChange,
    );
  } finally {
    await store.close();
  }
  return finishRun(resultsDir, settings, { verdict, store: store.where, skipped: run.skipped, confirm });
}

/** Lines of the store that did not validate (a torn write): their runs are missing from the baselines. */
const withSkipped = (v: RunVerdict, store: HistoryStore): RunVerdict =>
  store.skippedLines > 0 ? { ...v, skippedLines: store.skippedLines } : v;

/** A judged run's end: its verdict next to its results, its label, its notification when due. */
async function finishRun(
  resultsDir: string,
  settings: HistorySettings,
  r: { verdict: RunVerdict; store: string; skipped: string[]; confirm: ConfirmRequest | undefined },
): Promise<RecordedRun> {
  const { verdict, confirm } = r;
  writeAtomic(join(resultsDir, VERDICT_FILE), JSON.stringify(verdict, null, 2));
  const out: RecordedRun = {
    verdict,
    label: regressionLabel(verdict),
    store: r.store,
    skipped: r.skipped,
    ...(confirm ? { confirm } : {}),
  };
  const n = settings.notify;
  // a notification that fails is reported, never a reason to record the run again
  if (n && notifiesAtRecord(settings, verdict, confirm !== undefined))
    out.notified = await notifyOnce(resultsDir, n, verdict).catch(
      (e: unknown) => `failed: ${e instanceof Error ? e.message : String(e)}`,
    );
  return out;
}

/**
 * A scheduled sweep's end: its points into the store (failed ones too) and its origin next to its
 * results ({@link ORIGIN_FILE}), no verdict: its night judges it with its sibling sweeps
 * ({@link recordNight}).
 */
export async function storeRun(
  resultsDir: string,
  origin: RunOrigin,
  settings: HistorySettings = loadHistorySettings(),
  failures: PointFailures = {},
  costs: PointCosts = {},
): Promise<{ runId: string; points: number; store: string; skipped: string[] }> {
  writeAtomic(join(resultsDir, ORIGIN_FILE), JSON.stringify(origin));
  const run = runOf(resultsDir, failures, costs);
  const store = await openStore(storeLocation(settings, resultsDir));
  try {
    await store.putRun(run.runId, run.points);
  } finally {
    await store.close();
  }
  return { runId: run.runId, points: run.points.length, store: store.where, skipped: run.skipped };
}

/** The verdicts of a night's runs as one family, each against its whole stored series. */
async function nightFromStore(
  store: HistoryStore,
  night: string,
  runs: readonly NightRun[],
  settings: HistorySettings,
): Promise<RunVerdict[]> {
  const series = new Map<string, HistoryPoint[]>();
  for (const p of runs.flatMap((r) => r.points)) series.set(seriesId(p.key), await store.series(p.key));
  return evaluateNight(night, runs, (p) => series.get(seriesId(p.key)) ?? [], settings.detection);
}

/**
 * The end of a scheduled run (a night): the runs its sweeps stored ({@link storeRun}) judged as one
 * family (docs/history.md "A scheduled night is one family"), each run's verdict written and notified
 * as {@link recordRun} does. `missing`: runs the store does not hold (their sweep could not store them).
 */
export async function recordNight(
  night: string,
  runs: readonly { runId: string; resultsDir: string }[],
  settings: HistorySettings = loadHistorySettings(),
): Promise<{ runs: (RecordedRun & { runId: string })[]; missing: string[] }> {
  if (runs.length === 0) return { runs: [], missing: [] };
  const store = await openStore(storeLocation(settings, runs[0]!.resultsDir));
  const judged: { resultsDir: string; verdict: RunVerdict; confirm: ConfirmRequest | undefined }[] = [];
  const missing: string[] = [];
  try {
    const stored: (NightRun & { resultsDir: string })[] = [];
    for (const r of runs) {
      const points = await store.run(r.runId);
      if (points.length === 0) missing.push(r.runId);
      else stored.push({ ...r, points });
    }
    const verdicts = await nightFromStore(store, night, stored, settings);
    for (const [i, r] of stored.entries()) {
      const verdict = withSkipped(verdicts[i]!, store);
      const confirm = await confirmationRequest(
        verdict,
        r.points,
        store,
        settings.confirm,
        settings.detection.minRelativeChange,
      );
      judged.push({ resultsDir: r.resultsDir, verdict, confirm });
    }
  } finally {
    await store.close();
  }
  const out: (RecordedRun & { runId: string })[] = [];
  for (const j of judged)
    out.push({
      runId: j.verdict.runId,
      ...(await finishRun(j.resultsDir, settings, { ...j, store: store.where, skipped: [] })),
    });
  return { runs: out, missing };
}

/**
 * Notify once per run: the marker ({@link NOTIFIED_FILE}) is created exclusively before notifying, so a
 * retried or concurrent attempt finds it and does not notify again; a failed notification removes it.
 */
async function notifyOnce(
  resultsDir: string,
  n: NonNullable<HistorySettings['notify']>,
  verdict: RunVerdict,
  body: string = JSON.stringify({ ...verdict, text: verdictText(verdict) }),
  markerName = NOTIFIED_FILE,
): Promise<string> {
  const marker = join(resultsDir, markerName);
  try {
    writeFileSync(marker, JSON.stringify({ runId: verdict.runId, started: new Date().toISOString() }), { flag: 'wx' });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return `already notified for run ${verdict.runId} (${marker})`;
    throw e;
  }
  try {
    const done = await notify(n, verdict.runId, body);
    writeAtomic(marker, JSON.stringify({ runId: verdict.runId, notified: done, at: new Date().toISOString() }));
    return done;
  } catch (e) {
    rmSync(marker, { force: true });
    throw e;
  }
}

/** Run the notification command and/or POST the webhook; says what was notified (no URL: it may hold a token). */
async function notify(n: NonNullable<HistorySettings['notify']>, runId: string, body: string): Promise<string> {
  const done: string[] = [];
  if (n.command) {
    await runHook(n.command, body, {
      timeoutMs: n.timeoutSeconds * 1000,
      env: hookEnv({ INFERSWEEP_RUN_ID: runId }),
    });
    done.push(`command ${n.command[0]}`);
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
 * The end of a confirmation: the flagged run's verdict with the A/B's outcome (`confirmation`, and the
 * text's last lines) to the notification, once per run, when it is due: a confirmed regression, and a
 * confirmation that failed (fail closed: the flag stands and notifies); a cleared one only under
 * `notify.on: always`.
 */
export async function notifyConfirmation(
  resultsDir: string,
  result: ConfirmResult | { failed: string },
  settings: HistorySettings = loadHistorySettings(),
): Promise<string | undefined> {
  const n = settings.notify;
  const verdict = readVerdict(resultsDir);
  if (!n || !verdict) return undefined;
  const failed = 'failed' in result;
  if (!failed && result.outcome === 'cleared' && n.on !== 'always') return undefined;
  const what = failed ? `the paired A/B failed, the flag stands: ${result.failed}` : confirmationText(result);
  const body = JSON.stringify({ ...verdict, confirmation: result, text: `${verdictText(verdict)}\n${what}` });
  return notifyOnce(resultsDir, n, verdict, body, CONFIRM_NOTIFIED_FILE);
}

/**
 * Rebuild a store from the results folders under a results root: the runs found there replace what the
 * store held for them, all at once (one transaction on PostgreSQL), and nothing else is deleted: runs of
 * another root sharing the store stay (the file store drops its lines that do not validate, counted in
 * `droppedLines`). Then each run's verdict is recomputed as of its own time (later
 * runs are ignored, ./verdict.ts `evaluatePoint`) and `history.json` rewritten.
 */
export async function rebuildHistory(
  store: HistoryStore,
  folders: readonly string[],
  settings: HistorySettings,
): Promise<{ runs: number; points: number; regressions: number; skipped: string[]; droppedLines: number }> {
  const runs = folders.map((d) => extractRun(d)).filter((r) => r.points.length > 0 || r.skipped.length > 0);
  const skipped = runs.flatMap((r) => r.skipped);
  const timed = runs
    .filter((r) => r.points.length > 0)
    .sort((a, b) => a.points[0]!.time.localeCompare(b.points[0]!.time));
  await store.replaceRuns(timed.map((r) => ({ runId: r.runId, points: r.points })));
  const droppedLines = store.skippedLines;
  let points = 0;
  let regressions = 0;
  // a scheduled run's sweeps are judged together, as their night was ({@link recordNight}); an ad-hoc run alone
  const groups = new Map<string, typeof timed>();
  for (const r of timed) {
    const id = readOrigin(r.points[0]!.resultsDir)?.night;
    const key = id === undefined ? `ad-hoc ${r.runId}` : `night ${id}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  for (const [key, group] of groups) {
    const verdicts = key.startsWith('night ')
      ? await nightFromStore(store, key.slice('night '.length), group, settings)
      : [await verdictFromStore(store, group[0]!.runId, group[0]!.points, settings)];
    for (const [i, v] of verdicts.entries()) {
      points += group[i]!.points.length;
      regressions += v.regressions;
      writeAtomic(join(group[i]!.points[0]!.resultsDir, VERDICT_FILE), JSON.stringify(v, null, 2));
    }
  }
  return { runs: timed.length, points, regressions, skipped, droppedLines };
}
