/**
 * One task queue, one deployment. Task queues are named by cluster profile (`infersweep-<cluster>`,
 * libs/core taskQueueFor), so two deployments on one namespace that both name a profile `h200` would
 * poll one queue and run each other's activities with the wrong keys, secrets and results roots. A
 * worker carries its deployment's tag in its identity ({@link workerIdentity}) and, at start, refuses
 * to poll a queue another deployment's worker polls ({@link checkTaskQueue}, both queue types, pollers
 * seen in the last {@link FRESH_POLLER_SECONDS} s). The first deployment keeps its queue; the second
 * gets an error naming the other deployment and the fix (docs/deploy.md "One namespace, several
 * deployments").
 */
import { hostname } from 'node:os';
import type { NativeConnection } from '@temporalio/worker';
import { InfersweepError } from '@infersweep/core';

const TAG_KEY = 'infersweep-deployment=';
/** A poller last seen longer ago than this has stopped (the CLI's idle-worker hint uses the same window). */
export const FRESH_POLLER_SECONDS = 70;

/** A worker identity that names its deployment: `<pid>@<host> infersweep-deployment=<tag>`. */
export function workerIdentity(tag: string, base = `${process.pid}@${hostname()}`): string {
  return `${base} ${TAG_KEY}${tag}`;
}

/** The deployment tag a poller's identity names; undefined for a worker that names none (not infersweep's, or older). */
export function deploymentOfIdentity(identity: string): string | undefined {
  const at = identity.lastIndexOf(TAG_KEY);
  return at < 0 ? undefined : identity.slice(at + TAG_KEY.length).split(/\s/, 1)[0] || undefined;
}

/** Another deployment's worker polls this worker's task queue: it does not start. */
export class TaskQueueSharedError extends InfersweepError {
  override readonly name = 'TaskQueueSharedError';
  constructor(taskQueue: string, namespace: string, tag: string, others: { identity: string; tag: string }[]) {
    super(
      [
        `task queue ${taskQueue} on namespace ${namespace} is polled by another deployment's worker:`,
        ...others.map((o) => `  ${o.identity} (deployment ${o.tag})`),
        `this worker is deployment ${tag} (TEMPORAL_NAMESPACE + INFERSWEEP_DEPLOYMENT_ID); sharing the queue would run`,
        "each deployment's activities with the other's keys, secrets and results roots. Give each deployment its own",
        'namespace, or cluster profiles of its own names (docs/deploy.md "One namespace, several deployments").',
      ].join('\n'),
      { kind: 'fatal', context: { step: 'worker start', taskQueue, namespace } },
    );
  }
}

/** Refuse (TaskQueueSharedError) when a worker of a deployment other than `tag` polls `taskQueue` now. */
export async function checkTaskQueue(
  connection: NativeConnection,
  namespace: string,
  taskQueue: string,
  tag: string,
  now = Date.now(),
): Promise<void> {
  const others: { identity: string; tag: string }[] = [];
  // TASK_QUEUE_KIND_NORMAL = 1; TASK_QUEUE_TYPE_WORKFLOW = 1, _ACTIVITY = 2 (temporal.api.enums.v1)
  for (const taskQueueType of [1, 2]) {
    const res = await connection.workflowService.describeTaskQueue({
      namespace,
      taskQueue: { name: taskQueue, kind: 1 },
      taskQueueType,
    });
    for (const p of res.pollers ?? []) {
      const seconds = Number(p.lastAccessTime?.seconds ?? 0);
      if (seconds > 0 && now - seconds * 1000 > FRESH_POLLER_SECONDS * 1000) continue;
      const other = deploymentOfIdentity(p.identity ?? '');
      if (other !== undefined && other !== tag && !others.some((o) => o.identity === p.identity))
        others.push({ identity: p.identity!, tag: other });
    }
  }
  if (others.length > 0) throw new TaskQueueSharedError(taskQueue, namespace, tag, others);
}
