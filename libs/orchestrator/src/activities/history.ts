/**
 * The end of a completed sweep: its points into the history store and the run's verdict
 * (libs/history recordRun). What the store is, how sensitive the detection is and whom to notify
 * are the worker's settings (`INFERSWEEP_HISTORY_SETTINGS`, read on every call), never the sweep
 * input: a webhook token or a database password stays on the worker.
 */
import { log } from '@temporalio/activity';
import {
  loadHistorySettings,
  notifyConfirmation,
  recordNight,
  recordRun,
  storeRun,
  type ConfirmRequest,
  type RecordedRun,
} from '@infersweep/history';
import type { ConfirmResult, NightOf } from '@infersweep/sweep';

export interface RecordHistoryResult {
  /** points with a new regression */
  regressions: number;
  /** points that could not be measured (invalid or failed) where a measurement was due */
  unmeasured: number;
  /** the InfersweepRegression search attribute: `none`, N, `unmeasured:M` or both */
  label: string;
  /** where the history is (no credentials) */
  store: string;
  /** what was notified, when anything was */
  notified?: string;
  /** records left out of the history and why */
  skipped: string[];
  /** the paired A/B the verdict asks for: a regression, confirmation on (the worker's settings) */
  confirm?: ConfirmRequest;
}

/** A sweep's end as the history reads it: where its results are, its failed points and what each point cost. */
export interface RecordHistoryInput {
  sweepId: string;
  resultsDir: string;
  /** the sweep's failed or skipped points and why (absent in histories recorded before it was passed) */
  failed?: { concurrency: number; reason: string }[];
  /** each point's GPU-seconds by ledger category and the classes of its failed attempts (absent in older histories) */
  costs?: { concurrency: number; gpuSeconds?: Record<string, number>; failureClasses?: string[] }[];
}

/** One sweep of a night, judged: its verdict's counts, label, notification and A/B request. */
export type NightRunResult = RecordHistoryResult & { sweepId: string };

export interface HistoryActivities {
  /** An ad-hoc sweep's end: its points stored and judged on their own. */
  recordHistory(input: RecordHistoryInput): Promise<RecordHistoryResult>;
  /** A scheduled sweep's end: its points stored with their schedule, no verdict (its night judges it). */
  storeHistory(input: RecordHistoryInput & { night: NightOf }): Promise<{ store: string; points: number }>;
  /**
   * A scheduled run's end: its sweeps' stored runs judged as one family (docs/history.md "A scheduled
   * night is one family"); `missing`: sweeps whose points the store does not hold.
   */
  judgeNight(input: {
    night: string;
    runs: { sweepId: string; resultsDir: string }[];
  }): Promise<{ runs: NightRunResult[]; missing: string[] }>;
  /** The confirmation's outcome (or its failure) to the notification, when due; says what was notified. */
  notifyConfirmation(input: {
    sweepId: string;
    resultsDir: string;
    result: ConfirmResult | { failed: string };
  }): Promise<string | undefined>;
}

/** Needs none of the worker's deps (./context.ts): the settings are read on every call. */
export function historyActivities(): HistoryActivities {
  return {
    async recordHistory(input) {
      const { reasons, perPoint } = pointsOf(input);
      return resultOf(input.sweepId, await recordRun(input.resultsDir, loadHistorySettings(), reasons, perPoint));
    },
    async storeHistory(input) {
      const { reasons, perPoint } = pointsOf(input);
      const origin = { schedule: input.night.schedule, night: input.night.runId };
      const r = await storeRun(input.resultsDir, origin, loadHistorySettings(), reasons, perPoint);
      if (r.skipped.length) log.warn('history: records left out', { sweepId: input.sweepId, skipped: r.skipped });
      log.info(`history: ${r.points} points stored for the night ${input.night.runId}`, { sweepId: input.sweepId });
      return { store: r.store, points: r.points };
    },
    async judgeNight({ night, runs }) {
      const r = await recordNight(
        night,
        runs.map((x) => ({ runId: x.sweepId, resultsDir: x.resultsDir })),
        loadHistorySettings(),
      );
      if (r.missing.length) log.warn('history: sweeps of the night not in the store', { night, missing: r.missing });
      return { runs: r.runs.map((x) => ({ sweepId: x.runId, ...resultOf(x.runId, x) })), missing: r.missing };
    },
    async notifyConfirmation({ sweepId, resultsDir, result }) {
      const done = await notifyConfirmation(resultsDir, result, loadHistorySettings());
      log.info(`history: confirmation notified: ${done ?? 'nothing due'}`, { sweepId });
      return done;
    },
  };
}

/** The failed points' reasons and the points' costs, by concurrency. */
function pointsOf({ failed = [], costs = [] }: RecordHistoryInput) {
  return {
    reasons: Object.fromEntries(failed.map((f) => [f.concurrency, f.reason])),
    perPoint: Object.fromEntries(costs.map(({ concurrency, ...c }) => [concurrency, c])),
  };
}

/** A recorded run as the workflow reads it (logged as it goes). */
function resultOf(sweepId: string, r: RecordedRun): RecordHistoryResult {
  if (r.skipped.length) log.warn('history: records left out', { sweepId, skipped: r.skipped });
  if (r.notified?.startsWith('failed')) log.warn(`history: notification ${r.notified}`, { sweepId });
  log.info(`history: regressions: ${r.label}`, { sweepId, store: r.store });
  return {
    regressions: r.verdict.regressions,
    unmeasured: r.verdict.unmeasured,
    label: r.label,
    store: r.store,
    skipped: r.skipped,
    ...(r.notified ? { notified: r.notified } : {}),
    ...(r.confirm ? { confirm: r.confirm } : {}),
  };
}
