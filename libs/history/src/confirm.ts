/**
 * From a flagged verdict to the paired A/B that confirms or clears it (the confirmWorkflow,
 * libs/orchestrator/src/workflows/confirm.ts; the statistic is libs/stats `pairedComparison`):
 * which regression is confirmed, against which last good run, with which candidate images in between,
 * and the notification of the outcome. This consumes the verdict's findings (./verdict.ts); it does
 * not judge anything itself. The settings are the worker's (`confirm` in INFERSWEEP_HISTORY_SETTINGS).
 */
import { execFile } from 'node:child_process';
import { z } from 'zod';
import {
  CONFIRM_METRICS,
  type ConfirmArm,
  type ConfirmInput,
  type ConfirmMetric,
  type ConfirmResult,
} from '@infersweep/sweep';
import { HIGHER_IS_BETTER, type HistoryPoint, type HistoryStore } from './schema';
import type { RunVerdict } from './verdict';
import { hookEnv } from './hook';

export const confirmSettingsSchema = z
  .object({
    /** a flagged regression starts a paired A/B (default); false: the verdict stands as flagged */
    enabled: z.boolean().default(true),
    /** pairs per comparison (k): each costs two server starts and two points */
    pairs: z.number().int().min(2).default(6),
    /** the two-sided level of the paired t-interval */
    level: z.number().gt(0).lt(1).default(0.95),
    /** `confirmed`: a regression notifies once the A/B confirmed it (default); `flagged`: at the flag too */
    notifyOn: z.enum(['confirmed', 'flagged']).default('confirmed'),
    /** the ordered images between the last good and the current one, for bisection */
    candidates: z
      .object({
        /** the whole release order: the images strictly between the good and the current one are bisected */
        images: z.array(z.string().min(1)).optional(),
        /**
         * argv run on the worker without a shell, with INFERSWEEP_GOOD_IMAGE and INFERSWEEP_BAD_IMAGE set;
         * prints the images strictly between them, oldest first, one per line
         */
        command: z.array(z.string().min(1)).min(1).optional(),
        timeoutSeconds: z.number().positive().default(60),
      })
      .strict()
      .optional(),
  })
  .strict();
export type ConfirmSettings = z.infer<typeof confirmSettingsSchema>;

/** What the sweep's close starts the confirmation with (the rest of ConfirmInput is the sweep's). */
export type ConfirmRequest = Omit<
  ConfirmInput,
  'confirmId' | 'resultsRoot' | 'startupBudgetSeconds' | 'pointBudgetSeconds' | 'deploymentTag'
>;

/** The regression a confirmation tests: the regressed point and A/B-measurable primary metric that moved most (new changes only, not pending ones). */
export interface FlaggedRegression {
  concurrency: number;
  metric: ConfirmMetric;
  /** the last run before the change (the last good run) */
  previousRunId: string;
  relativeChange: number;
}

export function regressionToConfirm(verdict: RunVerdict): FlaggedRegression | undefined {
  let best: FlaggedRegression | undefined;
  for (const p of verdict.points) {
    if (p.status !== 'regression') continue;
    for (const m of p.metrics) {
      // a secondary metric is reported only, a pending change was confirmed or cleared on its first night
      if (m.status !== 'regression' || !m.change || m.secondary || m.pending) continue;
      if (!(CONFIRM_METRICS as string[]).includes(m.metric)) continue;
      const rel = Math.abs(m.change.relativeChange);
      if (best === undefined || rel > Math.abs(best.relativeChange))
        best = {
          concurrency: p.concurrency,
          metric: m.metric as ConfirmMetric,
          previousRunId: m.change.previousRunId,
          relativeChange: m.change.relativeChange,
        };
    }
  }
  return best;
}

/** The images strictly between `good` and `bad` in a release order (none when either is missing or out of order). */
export function imagesBetween(order: readonly string[], good: string, bad: string): string[] {
  const i = order.indexOf(good);
  const j = order.indexOf(bad);
  return i >= 0 && j > i ? order.slice(i + 1, j) : [];
}

/** The candidates command's output: one image per line, blank lines ignored, the two ends left out. */
export function parseCandidates(stdout: string, good: string, bad: string): string[] {
  return stdout
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && l !== good && l !== bad);
}

function runCandidatesCommand(
  argv: readonly string[],
  good: string,
  bad: string,
  timeoutMs: number,
): Promise<string[]> {
  const [cmd, ...args] = argv;
  return new Promise((resolve, reject) => {
    execFile(
      cmd!,
      args,
      {
        timeout: timeoutMs,
        maxBuffer: 1 << 20,
        env: hookEnv({ INFERSWEEP_GOOD_IMAGE: good, INFERSWEEP_BAD_IMAGE: bad }),
      },
      (err, stdout, stderr) => {
        if (err)
          reject(
            new Error(`confirm.candidates.command ${cmd}: ${err.message.split('\n')[0]} ${stderr.slice(-500)}`.trim()),
          );
        else resolve(parseCandidates(stdout, good, bad));
      },
    );
  });
}

/** The ordered candidate images between the two runs' images, from the settings' list or command. */
export async function candidatesFor(settings: ConfirmSettings, good: string, bad: string): Promise<string[]> {
  if (good === bad) return [];
  const c = settings.candidates;
  if (c?.images) return imagesBetween(c.images, good, bad);
  if (c?.command) return runCandidatesCommand(c.command, good, bad, c.timeoutSeconds * 1000);
  return [];
}

const armOf = (p: HistoryPoint): ConfirmArm => ({
  runId: p.runId,
  image: p.context.image,
  planRef: { planHash: p.context.planHash, resultsDir: p.resultsDir },
});

/**
 * The confirmation a verdict asks for, or undefined: confirmation off, no regression of an
 * A/B-measurable metric, or the last good run no longer in the store.
 */
export async function confirmationRequest(
  verdict: RunVerdict,
  runPoints: readonly HistoryPoint[],
  store: Pick<HistoryStore, 'run'>,
  settings: ConfirmSettings,
  gate: number,
): Promise<ConfirmRequest | undefined> {
  if (!settings.enabled || verdict.regressions === 0) return undefined;
  const flagged = regressionToConfirm(verdict);
  if (!flagged) return undefined;
  const current = runPoints.find((p) => p.key.concurrency === flagged.concurrency);
  const good = (await store.run(flagged.previousRunId)).find((p) => p.key.concurrency === flagged.concurrency);
  if (!current || !good) return undefined;
  return {
    sweepId: verdict.runId,
    good: armOf(good),
    current: armOf(current),
    concurrency: flagged.concurrency,
    metric: flagged.metric,
    higherIsBetter: HIGHER_IS_BETTER[flagged.metric],
    gate,
    pairs: settings.pairs,
    level: settings.level,
    candidates: await candidatesFor(settings, good.context.image, current.context.image),
  };
}

const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)} %`;

/** One line per comparison and the outcome: what the confirmation notification says. */
export function confirmationText(r: ConfirmResult): string {
  const lines = [
    `regression of ${r.metric} at c=${r.concurrency} in run ${r.sweepId}: ${r.outcome} by a paired A/B (${r.comparison.pairs} pairs)`,
  ];
  for (const s of r.steps)
    lines.push(
      `  ${s.step}: ${s.b} vs ${s.a}: ${pct(s.relativeEffect)} [${pct(s.relativeLower)}, ${pct(s.relativeUpper)}] (${(s.level * 100).toFixed(0)} % CI, gate ${(s.gate * 100).toFixed(1)} %): ${s.outcome}`,
    );
  if (r.culprit)
    lines.push(
      `first bad image: ${r.culprit.image} (${pct(r.culprit.comparison.relativeEffect)}, CI [${pct(r.culprit.comparison.relativeLower)}, ${pct(r.culprit.comparison.relativeUpper)}]${r.culprit.bisected ? ', bisected' : ''})`,
    );
  return lines.join('\n');
}
