/**
 * Starting and finding sweeps (used by the CLI and the tests): the caller resolves the config
 * into a plan first, so a running sweep is immune to later config edits.
 */
import { Client, Connection, WorkflowExecutionAlreadyStartedError, type WorkflowHandle } from '@temporalio/client';
import { join } from 'node:path';
import type { SweepPlan } from '@infersweep/topology';
import {
  SWEEP_ALL_WORKFLOW_TYPE,
  SWEEP_WORKFLOW_TYPE,
  sweepSearchAttributes,
  sweepWorkflowId,
  taskQueueFor,
  type SweepAllInput,
  type SweepInput,
} from '@infersweep/sweep';
import { dataDir, workflowUiLink, type TemporalTarget } from './temporal-env';

export interface SweepMeta {
  /** config name (the file's `name:`) */
  configName: string;
  /** content hash of the config file text */
  configHash: string;
  /** run label: part of the workflow id (default: a timestamp) */
  label: string;
  /** root of the results folders (default .infersweep/results) */
  resultsRoot?: string;
  maxPointAttempts?: number;
  operatorTimeout?: string;
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
    resultsDir: join(meta.resultsRoot ?? join(dataDir, 'results'), sweepId),
    importImage: plan.slurm.containerRuntime === 'pyxis',
    operatorTimeout: meta.operatorTimeout,
  };
}

export async function connectClient(target: TemporalTarget): Promise<Client> {
  const connection = await Connection.connect({
    address: target.address,
    tls: target.tls ? {} : undefined,
    apiKey: target.apiKey,
  });
  return new Client({ connection, namespace: target.namespace });
}

export class SweepAlreadyRunningError extends Error {
  constructor(
    readonly workflowId: string,
    readonly uiLink: string,
  ) {
    super(`a sweep with id ${workflowId} is already running (${uiLink}); watch it with \`infersweep watch ${workflowId}\`, or start another with a different --label`);
    this.name = 'SweepAlreadyRunningError';
  }
}

export interface StartedSweep {
  workflowId: string;
  runId: string;
  uiLink: string;
  handle: WorkflowHandle;
}

/** Start one orientation's sweep; a second start with the same id while one runs is refused. */
export async function startSweep(client: Client, target: TemporalTarget, input: SweepInput): Promise<StartedSweep> {
  try {
    const handle = await client.workflow.start(SWEEP_WORKFLOW_TYPE, {
      taskQueue: taskQueueFor(input.cluster),
      workflowId: input.sweepId,
      args: [input],
      workflowIdConflictPolicy: 'FAIL',
      typedSearchAttributes: sweepSearchAttributes(input),
      memo: { configHash: input.configHash, planHash: input.planHash, resultsDir: input.resultsDir },
      staticSummary: `${input.orientation} sweep of ${input.model} on ${input.cluster}: ${input.points.length} points (c=${input.points.join(',')})`,
    });
    return { workflowId: input.sweepId, runId: handle.firstExecutionRunId, uiLink: workflowUiLink(target, input.sweepId, handle.firstExecutionRunId), handle };
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) throw new SweepAlreadyRunningError(input.sweepId, workflowUiLink(target, input.sweepId));
    throw err;
  }
}

/** `--orientation all`: a parent workflow running one child sweep per orientation. */
export async function startSweepAll(client: Client, target: TemporalTarget, inputs: SweepInput[], maxConcurrentSweeps = 1): Promise<StartedSweep> {
  const first = inputs[0];
  if (!first) throw new Error('no orientation to sweep');
  const workflowId = sweepWorkflowId(first.configName, 'all', first.cluster, first.label);
  const arg: SweepAllInput = { sweeps: inputs, maxConcurrentSweeps };
  try {
    const handle = await client.workflow.start(SWEEP_ALL_WORKFLOW_TYPE, {
      taskQueue: taskQueueFor(first.cluster),
      workflowId,
      args: [arg],
      workflowIdConflictPolicy: 'FAIL',
      typedSearchAttributes: sweepSearchAttributes({ ...first, orientation: 'all' }),
      staticSummary: `all orientations (${inputs.map((i) => i.orientation).join(', ')}) of ${first.model} on ${first.cluster}`,
    });
    return { workflowId, runId: handle.firstExecutionRunId, uiLink: workflowUiLink(target, workflowId, handle.firstExecutionRunId), handle };
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) throw new SweepAlreadyRunningError(workflowId, workflowUiLink(target, workflowId));
    throw err;
  }
}
