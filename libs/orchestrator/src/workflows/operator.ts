/**
 * The operator wait of a sweep (./run.ts): the sweep says why it waits and what the operator may do,
 * and the retryNow update (wired in ./sweep.ts) ends the wait with a retry. Workflow code.
 */
import { ApplicationFailure, condition } from '@temporalio/workflow';
import type { SweepPhase, SweepProgress } from '@infersweep/sweep';

/** What the wait needs of the sweep. */
export interface OperatorHost {
  readonly state: SweepProgress;
  readonly aborted: boolean;
  publish(phase?: SweepPhase, message?: string): void;
  setStatus(status: string): void;
  /** no point (nor replicate) is left to run */
  noPointsLeft(): boolean;
  /** the workflow itself is cancelled */
  cancelled(): boolean;
}

export class OperatorWait {
  private retry = false;

  /**
   * @param budgetBase allocation attempts before the last operator retry, which no longer count
   *   (continue-as-new carries it)
   */
  constructor(
    private readonly host: OperatorHost,
    private readonly timeout: string,
    public budgetBase: number,
  ) {}

  /** retryNow: the operator wait ends with a retry. */
  retryNow(): SweepProgress {
    this.retry = true;
    return this.host.state;
  }

  /** retryNow's validator: only a sweep waiting for an operator. */
  assertAwaiting(): void {
    const s = this.host.state;
    if (!s.awaitingOperator) throw new Error(`sweep is ${s.phase}, not waiting for an operator; nothing to retry`);
  }

  /**
   * Wait for the operator: retryNow (true), abort or no points left (false). `points`: the allocation
   * attempts are spent (no answer in time fails the sweep); `release`: a job could not be released
   * (a cancel of the workflow or no answer in time also ends the wait). `timeoutType`: the failure
   * type an unanswered `points` wait fails the sweep with.
   */
  async wait(reason: string, on: 'points' | 'release' = 'points', timeoutType = 'OperatorTimeout'): Promise<boolean> {
    const { host } = this;
    const s = host.state;
    s.awaitingOperator = { reason, since: new Date().toISOString() };
    const choices =
      on === 'points' ? 'resume (retryNow), skip points (skipPoint) or abort' : 'resume (retryNow) or abort';
    host.publish('awaiting-operator', `${reason} — ${choices}`);
    host.setStatus('awaiting-operator');
    this.retry = false;
    const over = on === 'points' ? () => host.noPointsLeft() : () => host.cancelled();
    const answered = await condition(() => this.retry || host.aborted || over(), this.timeout);
    s.awaitingOperator = undefined;
    if (!answered && on === 'points')
      throw ApplicationFailure.nonRetryable(`no operator answer within ${this.timeout}: ${reason}`, timeoutType);
    if (this.retry && on === 'points') this.budgetBase = s.allocations.length;
    host.setStatus('running');
    return this.retry;
  }
}
