/** What `infersweep resume` runs (its options are in ../commands/resume.ts). */
import type { Client } from '@temporalio/client';
import { retryNowUpdate, type SweepAllInput, type SweepInput } from '@infersweep/sweep';
import { SWEEP_ALL_WORKFLOW_TYPE } from '@infersweep/core';
import { startSweep, startSweepAll } from '@infersweep/orchestrator';
import { out, EXIT } from '../ops/cli';
import { follow } from '../ops/follow';
import { describeSweep, withSession, type Session, type SweepView } from '../ops/temporal';
import { sweepSucceeded } from '../ops/render';

/** The input a workflow was started with (first history event), decoded. */
export async function startInput(client: Client, id: string, runId?: string): Promise<unknown> {
  const history = await client.workflow.getHandle(id, runId).fetchHistory();
  const payload = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  if (!payload) throw new Error(`sweep ${id}: its history has no start input`);
  return client.options.loadedDataConverter.payloadConverter.fromPayload(payload);
}

async function restart(s: Session, view: SweepView): Promise<string> {
  const input = await startInput(s.client, view.workflowId, view.runId);
  if (view.type === SWEEP_ALL_WORKFLOW_TYPE) {
    // same workflow id, task queue and per-run results root: a scheduled run keeps its children's
    // sweep ids and results folders, so their finished points are found and kept
    const all = input as SweepAllInput;
    const identity = { workflowId: view.workflowId, taskQueue: view.taskQueue, perRun: all.perRun };
    return (await startSweepAll(s.client, s.target, all.sweeps, all.maxConcurrentSweeps, identity)).runId;
  }
  // a run that continued as new carries its predecessor's state (allocation, server): a restart
  // starts from the frozen input alone (libs/orchestrator/src/workflows/carry-over.ts SweepCarryOver)
  const { carried: _carried, ...fresh } = input as SweepInput & { carried?: unknown };
  return (await startSweep(s.client, s.target, fresh, view.taskQueue)).runId;
}

export interface ResumeOpts {
  reason: string;
  detach?: boolean;
}

export async function resume(id: string, opts: ResumeOpts): Promise<number> {
  return withSession(async (s) => {
    const view = await describeSweep(s, id, { queryTimeoutMs: 5000 });
    if (view.status === 'RUNNING') {
      const waiting = [view, ...view.children].filter((v) => v.progress?.awaitingOperator && v.status === 'RUNNING');
      for (const w of waiting) {
        await s.client.workflow
          .getHandle(w.workflowId)
          .executeUpdate(retryNowUpdate, { args: [{ reason: opts.reason }] });
        out(`${w.workflowId}: was waiting for an operator (${w.progress!.awaitingOperator!.reason}); retrying now`);
      }
      if (waiting.length === 0)
        out(`${id} is running; nothing to resume${view.progressNote ? ` (${view.progressNote})` : ''}`);
    } else if (sweepSucceeded(view)) {
      out(`${id} completed with every point done; nothing to resume (report: infersweep report ${id})`);
      return EXIT.ok;
    } else {
      const runId = await restart(s, view);
      out(
        `${id} had ended ${view.status}${view.progress?.phase === 'aborted' ? ' (aborted)' : ''}${view.failure ? `: ${view.failure.rootCause}` : ''}; started again with the same plan (run ${runId}); points with valid results are kept`,
      );
    }
    if (opts.detach) return EXIT.ok;
    return follow(s, id);
  });
}
