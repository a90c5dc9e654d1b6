/**
 * Starting and finding sweeps (used by the CLI and the tests): the caller resolves the config
 * into a plan first, so a running sweep is immune to later config edits.
 */
import {
  Client,
  Connection,
  WorkflowExecutionAlreadyStartedError,
  type WorkflowHandle,
  type WorkflowStartOptions,
} from '@temporalio/client';
import { join } from 'node:path';
import type { SweepPlan } from '@infersweep/topology';
import { sweepSearchAttributes, type SnapshotInput, type SweepAllInput, type SweepInput } from '@infersweep/sweep';
import {
  deploymentTag,
  ResultsLayout,
  SNAPSHOT_WORKFLOW_TYPE,
  SWEEP_ALL_WORKFLOW_TYPE,
  SWEEP_WORKFLOW_TYPE,
  sweepWorkflowId,
  taskQueueFor,
} from '@infersweep/core';
import { connectionTls, dataDir, workflowUiLink, type TemporalTarget } from './connection';
import { clientInterceptors } from './closed-channel-guard';

export interface SweepMeta {
  /** config name (the file's `name:`) */
  configName: string;
  /** content hash of the config file text */
  configHash: string;
  /** run label: part of the workflow id (default: a timestamp) */
  label: string;
  /** root of the results folders (default: the cluster's resultsRoot, else .infersweep/results) */
  resultsRoot?: string;
  maxPointAttempts?: number;
  operatorTimeout?: string;
  /** default: currentDeploymentTag() */
  deploymentTag?: string;
}

/**
 * This deployment's tag (libs/core deploymentTag): TEMPORAL_NAMESPACE (default `default`) and
 * INFERSWEEP_DEPLOYMENT_ID (default `default`). The CLI, the worker and the janitor of one
 * deployment share that environment; give every deployment on a shared login account its own id.
 */
export function currentDeploymentTag(env: NodeJS.ProcessEnv = process.env): string {
  return deploymentTag(env.TEMPORAL_NAMESPACE || 'default', env.INFERSWEEP_DEPLOYMENT_ID || 'default');
}

export function defaultLabel(now = new Date()): string {
  return now.toISOString().replace(/[-:]/g, '').replace(/\..*$/, '').replace('T', '-');
}

/** The workflow input for one orientation's plan. */
export function buildSweepInput(plan: SweepPlan, meta: SweepMeta): SweepInput {
  const sweepId = sweepWorkflowId(meta.configName, plan.orientation, plan.cluster, meta.label);
  const budgets = plan.pointBudgets.map((b) => b.totalSeconds);
  return {
    sweepId,
    label: meta.label,
    configName: meta.configName,
    configHash: meta.configHash,
    planHash: plan.planHash,
    orientation: plan.orientation,
    cluster: plan.cluster,
    model: plan.model.servedName,
    image: plan.image,
    plan,
    points: plan.points,
    policy: plan.deployment.policy,
    pointBudgetSeconds: Math.max(...budgets, 1),
    startupBudgetSeconds: plan.readinessTimeoutSeconds,
    timeLimitMinutes: plan.timeLimit.minutes,
    maxAllocationAttempts: plan.deployment.maxAllocationAttempts,
    maxPointAttempts: meta.maxPointAttempts ?? 2,
    // results root: the caller's choice, else the cluster's setting (shared storage the worker sees), else the CLI's data folder
    resultsDir: ResultsLayout.of(meta.resultsRoot ?? plan.resultsRoot ?? join(dataDir, 'results'), sweepId).resultsDir,
    importImage: plan.slurm.containerRuntime === 'pyxis',
    importImageOn: plan.slurm.imageImport.on,
    ...(plan.deployment.pointsPerAllocation === undefined
      ? {}
      : { pointsPerAllocation: plan.deployment.pointsPerAllocation }),
    operatorTimeout: meta.operatorTimeout,
    deploymentTag: meta.deploymentTag ?? currentDeploymentTag(),
    ...(plan.search === undefined ? {} : { search: plan.search }),
    ...(plan.replicates === undefined
      ? {}
      : {
          replicates: {
            points: plan.replicates.points,
            min: plan.replicates.min,
            max: plan.replicates.max,
            target: plan.replicates.target,
            independentAllocations: plan.replicates.independentAllocations,
          },
        }),
  };
}

export async function connectClient(target: TemporalTarget): Promise<Client> {
  const connection = await Connection.connect({
    address: target.address,
    tls: connectionTls(target),
    apiKey: target.apiKey,
    interceptors: clientInterceptors(),
  });
  return new Client({ connection, namespace: target.namespace });
}

export class SweepAlreadyRunningError extends Error {
  constructor(
    readonly workflowId: string,
    readonly uiLink: string,
  ) {
    super(
      `a sweep with id ${workflowId} is already running (${uiLink}); watch it with \`infersweep watch ${workflowId}\`, or start another with a different --label`,
    );
    this.name = 'SweepAlreadyRunningError';
  }
}

export interface StartedSweep {
  workflowId: string;
  runId: string;
  uiLink: string;
  handle: WorkflowHandle;
}

/**
 * Start one orientation's sweep; a second start with the same id while one runs is refused.
 * `taskQueue`: a restart keeps the queue the sweep ran on (a scheduled run's children run on the
 * schedule's queue), else the cluster's.
 */
export async function startSweep(
  client: Client,
  target: TemporalTarget,
  input: SweepInput,
  taskQueue?: string,
): Promise<StartedSweep> {
  try {
    const handle = await client.workflow.start(SWEEP_WORKFLOW_TYPE, {
      taskQueue: taskQueue ?? taskQueueFor(input.cluster),
      workflowId: input.sweepId,
      args: [input],
      workflowIdConflictPolicy: 'FAIL',
      typedSearchAttributes: sweepSearchAttributes(input),
      memo: { configHash: input.configHash, planHash: input.planHash, resultsDir: input.resultsDir },
      staticSummary: `${input.orientation} sweep of ${input.model} on ${input.cluster}: ${input.points.length} points (c=${input.points.join(',')})`,
    });
    return {
      workflowId: input.sweepId,
      runId: handle.firstExecutionRunId,
      uiLink: workflowUiLink(target, input.sweepId, handle.firstExecutionRunId),
      handle,
    };
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError)
      throw new SweepAlreadyRunningError(input.sweepId, workflowUiLink(target, input.sweepId));
    throw err;
  }
}

/**
 * How a restarted parent keeps its identity (`infersweep resume` of an `--orientation all` sweep or
 * of a scheduled run): its workflow id, its task queue and its `perRun` results root, so its
 * children get the same sweep ids and results folders again (libs/orchestrator/src/workflows/sweep-all.ts).
 */
export interface SweepAllIdentity {
  workflowId: string;
  taskQueue: string;
  perRun?: SweepAllInput['perRun'];
}

/** `--orientation all`: a parent workflow running one child sweep per orientation. */
export async function startSweepAll(
  client: Client,
  target: TemporalTarget,
  inputs: SweepInput[],
  maxConcurrentSweeps = 1,
  identity?: SweepAllIdentity,
): Promise<StartedSweep> {
  const first = inputs[0];
  if (!first) throw new Error('no orientation to sweep');
  const workflowId = identity?.workflowId ?? sweepWorkflowId(first.configName, 'all', first.cluster, first.label);
  const arg: SweepAllInput = {
    sweeps: inputs,
    maxConcurrentSweeps,
    ...(identity?.perRun ? { perRun: identity.perRun } : {}),
  };
  return startOnce(client, target, SWEEP_ALL_WORKFLOW_TYPE, workflowId, {
    taskQueue: identity?.taskQueue ?? taskQueueFor(first.cluster),
    args: [arg],
    typedSearchAttributes: sweepSearchAttributes({ ...first, orientation: 'all' }),
    staticSummary: `all orientations (${inputs.map((i) => i.orientation).join(', ')}) of ${first.model} on ${first.cluster}`,
  });
}

/**
 * Start a snapshot (libs/orchestrator/src/workflows/snapshot.ts) as `workflowId` on `taskQueue`
 * (any worker runs it; its cells run on their clusters' task queues).
 */
export async function startSnapshot(
  client: Client,
  target: TemporalTarget,
  input: SnapshotInput,
  workflowId: string,
  taskQueue: string,
): Promise<StartedSweep> {
  const clusters = [...new Set(input.cells.map((c) => c.cluster))];
  return startOnce(client, target, SNAPSHOT_WORKFLOW_TYPE, workflowId, {
    taskQueue,
    args: [input],
    staticSummary: `snapshot ${input.name}: ${input.cells.length} cells on ${clusters.join(', ')}`,
  });
}

/** Start `type` as `workflowId`, never a second run of the id: its handle and Web UI link. */
async function startOnce(
  client: Client,
  target: TemporalTarget,
  type: string,
  workflowId: string,
  options: Omit<WorkflowStartOptions, 'workflowId' | 'workflowIdConflictPolicy'>,
): Promise<StartedSweep> {
  try {
    const handle = await client.workflow.start(type, { ...options, workflowId, workflowIdConflictPolicy: 'FAIL' });
    return {
      workflowId,
      runId: handle.firstExecutionRunId,
      uiLink: workflowUiLink(target, workflowId, handle.firstExecutionRunId),
      handle,
    };
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError)
      throw new SweepAlreadyRunningError(workflowId, workflowUiLink(target, workflowId));
    throw err;
  }
}
