/**
 * SlurmCluster: the one handle the rest of infersweep holds on a cluster, over one Executor (local
 * or SSH to a login node). Every operation is idempotent. Its concerns live in files named after
 * them: the queries and job state (./queries.ts), allocations (./allocation.ts), steps
 * (./steps.ts), logs (./logs.ts), liveness watching (./liveness-watch.ts) and images (./image.ts).
 */
import { sinfoNodesArgv, type AllocateRequest } from './commands';
import { allocate, UNAVAILABLE_NODE, withdraw, type AllocateHooks, type GrantedJob } from './allocation';
import { importImage, type ImportImageRequest, type ImportImageResult } from './image';
import { observe, watchLiveness, type LivenessWatch } from './liveness-watch';
import type { LivenessJudgeOptions, LivenessVerdict, WatchedStep } from './liveness';
import { copyLogs, fetchLogs, type LogRef, type LogTail } from './logs';
import { parseNodeStates, type LivenessObservation } from './parse';
import { SlurmQueries } from './queries';
import { goneStepLog, launchStep, stepStatus, stopStep, stopSteps, type StepHandle, type StepState } from './steps';

type StepRef = Pick<StepHandle, 'jobId' | 'node' | 'stepName' | 'launcherPid'>;
/** A part's parameters after the cluster it runs on. */
type AfterCluster<F> = F extends (q: never, ...rest: infer R) => unknown ? R : never;

export class SlurmCluster extends SlurmQueries {
  /** A running allocation for the request, however long the queue (./allocation.ts). */
  allocate(req: AllocateRequest, hooks: AllocateHooks = {}): Promise<GrantedJob> {
    return allocate(this, req, hooks);
  }

  /** The partition's nodes that can run a job now (not down, drained, …), each once. */
  async availableNodes(partition?: string): Promise<string[]> {
    const r = await this.query(sinfoNodesArgv(partition), { step: 'allocate' });
    const up = parseNodeStates(r.stdout).filter((n) => !UNAVAILABLE_NODE.test(n.state));
    return [...new Set(up.map((n) => n.node))];
  }

  /** Withdraw every trace of an allocation request (its launcher and every live job of the name). */
  withdraw(jobName: string, launcherPid?: number): Promise<void> {
    return withdraw(this, jobName, launcherPid);
  }

  /** One single-task srun step on `node`, detached, output to `logFile` (./steps.ts). */
  launchStep(...args: AfterCluster<typeof launchStep>): Promise<StepHandle> {
    return launchStep(this, ...args);
  }

  stepStatus(h: StepRef): Promise<StepState> {
    return stepStatus(this, h);
  }

  /** A gone step's log tail, read once, and the SetupError it shows for a program that never ran (./steps.ts). */
  goneStepLog(...args: AfterCluster<typeof goneStepLog>): ReturnType<typeof goneStepLog> {
    return goneStepLog(this, ...args);
  }

  stopStep(h: StepRef, timeoutMs?: number): Promise<void> {
    return stopStep(this, h, timeoutMs);
  }

  stopSteps(handles: StepRef[], timeoutMs?: number): Promise<void> {
    return stopSteps(this, handles, timeoutMs);
  }

  /** One batched liveness observation (job, steps, launchers) in one round trip. */
  observe(jobId: string, steps: readonly WatchedStep[] = []): Promise<LivenessObservation> {
    return observe(this, jobId, steps);
  }

  watchLiveness(
    jobId: string,
    steps: readonly WatchedStep[],
    opts: { intervalMs: number; judge?: LivenessJudgeOptions; onVerdict?(v: LivenessVerdict): void },
  ): LivenessWatch {
    return watchLiveness(this, jobId, steps, opts);
  }

  /** Size and last lines of each step's log (./logs.ts). */
  fetchLogs(handles: LogRef[], opts: { tailLines?: number } = {}): Promise<LogTail[]> {
    return fetchLogs(this, handles, opts);
  }

  copyLogs(handles: LogRef[], destDir: string, opts: { maxBytes?: number; timeoutMs?: number } = {}) {
    return copyLogs(this, handles, destDir, opts);
  }

  /** One import per squash path, under a lock (./image.ts). */
  importImage(req: ImportImageRequest): Promise<ImportImageResult> {
    return importImage(this, req);
  }
}
