/**
 * The judgement of a completed sweep: its verdict against the history of its series, then, for a
 * flagged regression, the paired A/B and bisection as a child workflow (./confirm.ts) and its
 * notification. Workflow code, called by SweepRun's close (./run.ts).
 */
import {
  CancellationScope,
  executeChild,
  isCancellation,
  ParentClosePolicy,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import {
  confirmIdOf,
  pointCosts,
  searchAttributeKeys,
  unmeasuredPoints,
  type SweepProgress,
  type SweepResult,
} from '@infersweep/sweep';
import type { RecordHistoryResult } from '../activities/history';
import type { SweepVerbs } from './activities';
import type { SweepRunInput } from './carry-over';
import { confirmWorkflow } from './confirm';
import { messageOf } from './failures';

/** What the judgement needs of the sweep: its input, state, verbs, status line and own scope. */
export interface JudgedSweep {
  readonly input: SweepRunInput;
  readonly state: SweepProgress;
  readonly act: SweepVerbs;
  readonly root: CancellationScope;
  publish(phase: undefined, message: string): void;
}

export class Judgement {
  private regressions?: number;
  private unmeasured?: number;
  private confirmation?: SweepResult['confirmation'];

  constructor(private readonly sweep: JudgedSweep) {}

  /**
   * A completed sweep against the history of its series (../activities/history.ts): the verdict
   * `none` or N becomes the InfersweepRegression search attribute. A history that cannot be
   * recorded is reported in the sweep's message and never fails the sweep.
   */
  async judge(): Promise<void> {
    const { input, state, act } = this.sweep;
    const { sweepId, resultsDir, night } = input;
    const failed = unmeasuredPoints(state);
    const costs = pointCosts(state);
    if (night) {
      // one orientation of a scheduled run: stored now, judged with its siblings when the run ends (./sweep-all.ts)
      await CancellationScope.nonCancellable(async () => {
        try {
          const h = await act.storeHistory({ sweepId, resultsDir, failed, costs, night });
          this.sweep.publish(undefined, `history stored in ${h.store}; the verdict is the night's (${night.runId})`);
        } catch (err) {
          this.sweep.publish(undefined, `history not recorded: ${messageOf(err)}`);
        }
      });
      return;
    }
    const confirm = await CancellationScope.nonCancellable(async () => {
      try {
        const h = await act.recordHistory({ sweepId, resultsDir, failed, costs });
        this.regressions = h.regressions;
        this.unmeasured = h.unmeasured;
        upsertSearchAttributes([{ key: searchAttributeKeys.regression, value: h.label }]);
        this.sweep.publish(undefined, `regressions: ${h.label} (history in ${h.store})`);
        return h.confirm;
      } catch (err) {
        this.sweep.publish(undefined, `history not recorded: ${messageOf(err)}`);
        return undefined;
      }
    });
    if (confirm)
      this.confirmation = await confirmRegression(
        input,
        confirm,
        act.notifyConfirmation,
        (m) => this.sweep.publish(undefined, m),
        () => this.sweep.root.consideredCancelled,
      );
  }

  /** The verdict's fields of the sweep's result (none before the judgement). */
  resultFields(): Pick<SweepResult, 'regressions' | 'unmeasured' | 'confirmation'> {
    return {
      ...(this.regressions === undefined ? {} : { regressions: this.regressions }),
      ...(this.unmeasured ? { unmeasured: this.unmeasured } : {}),
      ...(this.confirmation ? { confirmation: this.confirmation } : {}),
    };
  }
}

/** The sweep a confirmation compares against: its id, results and budgets. */
type ConfirmTarget = Pick<
  SweepRunInput,
  'sweepId' | 'resultsDir' | 'startupBudgetSeconds' | 'pointBudgetSeconds' | 'deploymentTag'
>;

/**
 * A flagged regression: the paired A/B and bisection as a child workflow (./confirm.ts), then its
 * notification (a failed confirmation notifies the flag: fail closed). A cancel of the caller
 * (`cancelled()` true) cancels it. Returns the sweep's result field `confirmation`.
 */
export async function confirmRegression(
  target: ConfirmTarget,
  request: NonNullable<RecordHistoryResult['confirm']>,
  notifyConfirmation: SweepVerbs['notifyConfirmation'],
  publish: (message: string) => void,
  cancelled: () => boolean,
): Promise<NonNullable<SweepResult['confirmation']>> {
  const { sweepId, resultsDir, startupBudgetSeconds, pointBudgetSeconds, deploymentTag } = target;
  const confirmId = confirmIdOf(sweepId);
  publish(`confirming the regression by a paired A/B (${confirmId})`);
  let outcome: Parameters<SweepVerbs['notifyConfirmation']>[0]['result'];
  let confirmation: NonNullable<SweepResult['confirmation']>;
  try {
    const r = await executeChild(confirmWorkflow, {
      workflowId: confirmId,
      args: [
        {
          ...request,
          confirmId,
          resultsRoot: resultsDir.replace(/\/+$/, '').replace(/\/[^/]*$/, ''),
          startupBudgetSeconds,
          pointBudgetSeconds,
          deploymentTag,
        },
      ],
      parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
    });
    outcome = r;
    confirmation = { confirmId, outcome: r.outcome, ...(r.culprit ? { culprit: r.culprit.image } : {}) };
    const culprit = r.culprit ? `; first bad image ${r.culprit.image}` : '';
    publish(`regression ${r.outcome} by the paired A/B${culprit}`);
  } catch (err) {
    if (isCancellation(err) && cancelled()) throw err;
    outcome = { failed: messageOf(err) };
    confirmation = { confirmId, outcome: 'failed', error: messageOf(err) };
    publish(`the paired A/B failed, the regression stands: ${messageOf(err)}`);
  }
  await CancellationScope.nonCancellable(() =>
    notifyConfirmation({ sweepId, resultsDir, result: outcome }).catch(() => undefined),
  );
  return confirmation;
}
