/**
 * The worker factory. The Temporal worker SDK (and the webpack it bundles workflows with) is imported
 * when a worker is made, not with this lib: the CLI's `plan`, `status`… load the orchestrator without it.
 */
import type { NativeConnection, Worker, WorkerOptions } from '@temporalio/worker';
import { taskQueueFor } from '@infersweep/core';
import { bundlerOptions, workflowsPath } from './bundle';
import { createActivities, sweepActivityInterceptors, type ActivityDeps } from './activities';
import { defaultDeps } from './activities/context';
import { connectionTls, temporalTarget, type TemporalTarget } from './connection';
import { loadWorkerSettings } from './worker-settings';
import { checkNamespace } from './namespace-check';
import { readCredentials, watchCredentials } from './credential-watch';
import { checkTaskQueue, workerIdentity } from './queue-check';
import { currentDeploymentTag } from './client';

export interface SweepWorkerOptions {
  cluster: string;
  target?: TemporalTarget;
  connection?: NativeConnection;
  /** pre-built workflow bundle (production); otherwise bundled from source at start */
  workflowBundle?: WorkerOptions['workflowBundle'];
  deps?: Partial<ActivityDeps>;
  taskQueue?: string;
  identity?: string;
  /** this deployment's tag (default currentDeploymentTag()): in the worker's identity, checked against the queue's other pollers */
  deploymentTag?: string;
}

export async function connectWorker(target: TemporalTarget): Promise<NativeConnection> {
  const { NativeConnection } = await import('@temporalio/worker');
  return NativeConnection.connect({
    address: target.address,
    tls: connectionTls(target),
    apiKey: target.apiKey,
  });
}

/**
 * One worker per cluster profile: it polls that cluster's task queue and its activities hold the
 * cluster's executor (SSH to the login node, or local).
 */
export async function createSweepWorker(opts: SweepWorkerOptions): Promise<{
  worker: Worker;
  connection: NativeConnection;
  owned: boolean;
  /** true when the worker stopped itself because its TLS files were rotated (its supervisor restarts it) */
  credentialsRotated: () => boolean;
}> {
  const target = opts.target ?? temporalTarget();
  // what the connection is made with: later rotations are compared against it (./credential-watch.ts)
  const credentials = opts.connection || target.embedded ? undefined : readCredentials(target);
  const connection = opts.connection ?? (await connectWorker(target));
  // the worker's authority, read once now (a malformed setting stops the worker here, named)
  const settings = opts.deps?.settings ?? loadWorkerSettings(opts.cluster);
  const deps = defaultDeps({ ...opts.deps, settings });
  // every search attribute the workflows write must exist, or a sweep loops at its first upsert
  // and no other deployment's worker may poll this worker's queue (./queue-check.ts)
  const taskQueue = opts.taskQueue ?? taskQueueFor(opts.cluster);
  const tag = opts.deploymentTag ?? currentDeploymentTag();
  await checkNamespace(connection, target.namespace)
    .then(() => checkTaskQueue(connection, target.namespace, taskQueue, tag))
    .catch(async (e: unknown) => {
      if (!opts.connection) await connection.close().catch(() => undefined);
      throw e;
    });
  const { Worker } = await import('@temporalio/worker');
  const worker = await Worker.create({
    connection,
    namespace: target.namespace,
    taskQueue,
    ...(opts.workflowBundle ? { workflowBundle: opts.workflowBundle } : { workflowsPath, bundlerOptions }),
    activities: createActivities(deps),
    interceptors: { activity: [sweepActivityInterceptors({ heartbeatMs: deps.heartbeatMs })] },
    maxCachedWorkflows: 100,
    // heartbeats carry live progress (phase, requests, ETA) for `watch` and the Web UI: send them
    // at most every 2 s instead of 80 % of the heartbeat timeout (they add no history events)
    maxHeartbeatThrottleInterval: '2 seconds',
    defaultHeartbeatThrottleInterval: '2 seconds',
    maxConcurrentActivityTaskExecutions: 20,
    // let running activities heartbeat out and clean up on SIGTERM
    shutdownGraceTime: '30 seconds',
    shutdownForceTime: '2 minutes',
    identity: opts.identity ? workerIdentity(tag, opts.identity) : workerIdentity(tag),
  });
  let rotated = false;
  if (credentials) {
    const stop = watchCredentials(credentials, {
      onApiKey: async (key) => {
        await connection.setApiKey(key);
        console.error('infersweep worker: the Temporal API key changed: the connection uses the new one');
      },
      onTlsChanged: () => {
        rotated = true;
        stop();
        console.error('infersweep worker: the Temporal TLS files changed: stopping, to reconnect with them');
        worker.shutdown();
      },
      onError: (err) =>
        console.error(
          `infersweep worker: re-reading the Temporal credentials failed (kept the current ones): ${err instanceof Error ? err.message : String(err)}`,
        ),
    });
  }
  return { worker, connection, owned: !opts.connection, credentialsRotated: () => rotated };
}
