/**
 * The end of a completed sweep: its points into the history store and the run's verdict
 * (libs/history recordRun). What the store is, how sensitive the detection is and whom to notify
 * are the worker's settings (`INFERSWEEP_HISTORY_SETTINGS`, read on every call), never the sweep
 * input: a webhook token or a database password stays on the worker.
 */
import { log } from '@temporalio/activity';
import { loadHistorySettings, notifyConfirmation, recordRun, type ConfirmRequest } from '@infersweep/history';
import type { ConfirmResult } from '@infersweep/sweep';

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

export interface HistoryActivities {
  /** `failed`: the sweep's failed or skipped points and why (absent in histories recorded before it was passed) */
  recordHistory(input: {
    sweepId: string;
    resultsDir: string;
    failed?: { concurrency: number; reason: string }[];
    /** each point's GPU-seconds by ledger category and the classes of its failed attempts (absent in older histories) */
    costs?: { concurrency: number; gpuSeconds?: Record<string, number>; failureClasses?: string[] }[];
  }): Promise<RecordHistoryResult>;
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
    async recordHistory({ sweepId, resultsDir, failed = [], costs = [] }) {
      const reasons = Object.fromEntries(failed.map((f) => [f.concurrency, f.reason]));
      const perPoint = Object.fromEntries(costs.map(({ concurrency, ...c }) => [concurrency, c]));
      const r = await recordRun(resultsDir, loadHistorySettings(), reasons, perPoint);
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
    },
    async notifyConfirmation({ sweepId, resultsDir, result }) {
      const done = await notifyConfirmation(resultsDir, result, loadHistorySettings());
      log.info(`history: confirmation notified: ${done ?? 'nothing due'}`, { sweepId });
      return done;
    },
  };
}
