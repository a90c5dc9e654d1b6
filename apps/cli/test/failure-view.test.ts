/**
 * The root cause of a closed sweep (../src/ops/failure.ts), over the failure chains the SDK hands
 * the client: the SDK's wrappers say where, the innermost failure says why.
 */
import { describe, expect, it } from 'vitest';
import {
  ActivityFailure,
  ApplicationFailure,
  ChildWorkflowFailure,
  TerminatedFailure,
  WorkflowFailedError,
} from '@temporalio/client';
import { RetryState } from '@temporalio/common';
import { failureView } from '../src/ops/failure';
import { failureLines } from '../src/ops/render';

const REFUSAL =
  'the sweep input asks for what this worker does not allow: plan.secretEnv = "X" is not allowed by this worker: INFERSWEEP_WORKER_SECRETS allows none';

/** A workflow that failed because an activity failed: what `handle.result()` rejects with. */
function activityFailed(activity: string, app: ApplicationFailure): WorkflowFailedError {
  return new WorkflowFailedError(
    'Workflow execution failed',
    new ActivityFailure('Activity task failed', activity, '1', RetryState.NON_RETRYABLE_FAILURE, 'w', app),
    RetryState.RETRY_POLICY_NOT_SET,
  );
}

describe('failureView', () => {
  it('a refused input: the refusal itself, in prepareSweep, typed; never "Activity task failed"', () => {
    // the interceptor's failure carries the thrown error as its cause (same message)
    const app = ApplicationFailure.create({
      message: REFUSAL,
      type: 'RefusedInputError',
      nonRetryable: true,
      cause: ApplicationFailure.create({ message: REFUSAL, type: 'RefusedInputError' }),
    });
    const v = failureView(activityFailed('prepareSweep', app));
    expect(v).toEqual({ rootCause: REFUSAL, type: 'RefusedInputError', where: ['activity prepareSweep'], via: [] });
    expect(failureLines(v)).toEqual([
      `  failure      ${REFUSAL}`,
      '  failed in    activity prepareSweep (RefusedInputError)',
    ]);
  });

  it('a deeper cause is the root; the message above it is kept as context', () => {
    const app = ApplicationFailure.create({
      message: 'allocation 42 lost',
      type: 'AllocationLostError',
      cause: ApplicationFailure.create({
        message: 'ssh: connect to host login1 port 22: Connection refused',
        type: 'Error',
      }),
    });
    const v = failureView(activityFailed('runPoint', app));
    expect(v.rootCause).toBe('ssh: connect to host login1 port 22: Connection refused');
    expect(v.via).toEqual(['allocation 42 lost']);
    expect(v.where).toEqual(['activity runPoint']);
  });

  it('a release that failed (thrown by the workflow itself) and a child sweep of an `all` run', () => {
    const release = ApplicationFailure.nonRetryable('release of job 7 failed: scancel: timeout', 'ReleaseFailed');
    const child = new ChildWorkflowFailure(
      'default',
      { workflowId: 'sweep-a-balanced', runId: 'r' },
      'sweepWorkflow',
      RetryState.NON_RETRYABLE_FAILURE,
      release,
    );
    const v = failureView(new WorkflowFailedError('Workflow execution failed', child, RetryState.RETRY_POLICY_NOT_SET));
    expect(v).toEqual({
      rootCause: 'release of job 7 failed: scancel: timeout',
      type: 'ReleaseFailed',
      where: ['sweep sweep-a-balanced'],
      via: [],
    });
  });

  it('a terminated workflow: the reason given', () => {
    const v = failureView(
      new WorkflowFailedError(
        'Workflow execution terminated',
        new TerminatedFailure('test cleanup'),
        RetryState.RETRY_POLICY_NOT_SET,
      ),
    );
    expect(v.rootCause).toBe('test cleanup');
    expect(v.type).toBe('terminated');
  });
});
