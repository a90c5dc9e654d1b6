/**
 * The CLI's view of sweeps on Temporal: connect, describe a sweep (its `progress` query merged
 * with the live heartbeat details of the running point), list sweeps by search attribute, and
 * check whether any worker polls a cluster's task queue.
 */
import { readFileSync } from 'node:fs';
import {
  Client,
  WorkflowNotFoundError,
  type WorkflowExecutionDescription,
  type WorkflowHandle,
} from '@temporalio/client';
import {
  SEARCH_ATTRIBUTES,
  progressQuery,
  snapshotQuery,
  type SnapshotProgress,
  type SweepProgress,
  type SweepResult,
} from '@infersweep/sweep';
import {
  ResultsLayout,
  SNAPSHOT_WORKFLOW_TYPE,
  SWEEP_ALL_WORKFLOW_TYPE,
  SWEEP_WORKFLOW_TYPE,
  taskQueueFor,
} from '@infersweep/core';
import { connectClient, temporalTarget, workflowUiLink, type TemporalTarget } from '@infersweep/orchestrator';
import { failureView, type FailureView } from './failure';

export interface Session {
  client: Client;
  target: TemporalTarget;
  close(): Promise<void>;
}

export async function openSession(target: TemporalTarget = temporalTarget()): Promise<Session> {
  const client = await connectClient(target);
  return { client, target, close: () => client.connection.close() };
}

export async function withSession<T>(fn: (s: Session) => Promise<T>): Promise<T> {
  const s = await openSession();
  try {
    return await fn(s);
  } finally {
    await s.close().catch(() => undefined);
  }
}

/** What the running point's activity last heartbeated (libs/agentx onProgress + phase). */
export interface LiveDetail {
  phase?: string;
  concurrency?: number;
  completed?: number;
  inFlight?: number;
  etaSeconds?: number;
  /** The allocate activity's (phase `allocating`): the job, Slurm's state and pending reason, the wait so far. */
  jobName?: string;
  jobId?: string;
  state?: string;
  reason?: string;
  waitedSeconds?: number;
  activity: string;
  attempt: number;
  lastHeartbeat?: string;
}

export type WorkflowStatusName =
  | 'RUNNING'
  | 'COMPLETED'
  | 'FAILED'
  | 'CANCELLED'
  | 'TERMINATED'
  | 'CONTINUED_AS_NEW'
  | 'TIMED_OUT'
  | 'UNKNOWN'
  | 'PAUSED'
  | 'UNSPECIFIED';

export interface SweepView {
  workflowId: string;
  runId: string;
  type: string;
  kind: 'sweep' | 'all' | 'snapshot' | 'other';
  status: WorkflowStatusName;
  uiLink: string;
  taskQueue: string;
  startTime?: string;
  closeTime?: string;
  searchAttributes: Record<string, string>;
  memo: Record<string, unknown>;
  progress?: SweepProgress;
  /** why there is no progress (no worker polls, query failed, …) */
  progressNote?: string;
  /** a closed sweep's progress read from the final snapshot in its results folder (no worker answered) */
  progressFrom?: string;
  live: LiveDetail[];
  /** for `--orientation all`: the child sweeps */
  children: SweepView[];
  /** why it failed, was cancelled, terminated or timed out: the root cause (./failure.ts) */
  failure?: FailureView;
  /** a snapshot's cells and headline (its result, or its `snapshot` query while it runs) */
  snapshot?: SnapshotProgress;
}

type Payloads = Parameters<Client['options']['loadedDataConverter']['payloadConverter']['fromPayload']>[0][];

function decodeDetails(client: Client, payloads: { payloads?: Payloads | null } | null | undefined): unknown {
  const p = payloads?.payloads?.[0];
  if (!p) return undefined;
  try {
    return client.options.loadedDataConverter.payloadConverter.fromPayload(p);
  } catch {
    return undefined;
  }
}

function tsToIso(ts: unknown): string | undefined {
  const t = ts as { seconds?: { toNumber?: () => number } | number | string; nanos?: number } | null | undefined;
  if (!t || t.seconds === undefined || t.seconds === null) return undefined;
  const sec = typeof t.seconds === 'object' && t.seconds.toNumber ? t.seconds.toNumber() : Number(t.seconds);
  return new Date(sec * 1000 + Math.floor((t.nanos ?? 0) / 1e6)).toISOString();
}

/** Live heartbeat details of a workflow's pending activities, decoded. */
export function liveDetails(client: Client, desc: WorkflowExecutionDescription): LiveDetail[] {
  const out: LiveDetail[] = [];
  for (const a of desc.raw.pendingActivities ?? []) {
    const d = decodeDetails(client, a.heartbeatDetails as never);
    const obj = d !== null && typeof d === 'object' ? (d as Record<string, unknown>) : {};
    const numOf = (k: string) => (typeof obj[k] === 'number' ? (obj[k] as number) : undefined);
    const strOf = (k: string) => (typeof obj[k] === 'string' ? (obj[k] as string) : undefined);
    out.push({
      phase: typeof obj.phase === 'string' ? obj.phase : undefined,
      concurrency: numOf('concurrency'),
      completed: numOf('completed'),
      inFlight: numOf('inFlight'),
      etaSeconds: numOf('etaSeconds'),
      jobName: strOf('jobName'),
      jobId: strOf('jobId'),
      state: strOf('state'),
      reason: strOf('reason'),
      waitedSeconds: numOf('waitedSeconds'),
      activity: a.activityType?.name ?? '?',
      attempt: a.attempt ?? 1,
      lastHeartbeat: tsToIso(a.lastHeartbeatTime as never),
    });
  }
  return out;
}

/** Workers polling the cluster's workflow task queue (seen in the last `freshSeconds`). */
export async function activePollers(
  client: Client,
  namespace: string,
  cluster: string,
  freshSeconds = 70,
): Promise<number> {
  const res = await client.workflowService.describeTaskQueue({
    namespace,
    // TASK_QUEUE_KIND_NORMAL = 1, TASK_QUEUE_TYPE_WORKFLOW = 1 (temporal.api.enums.v1)
    taskQueue: { name: taskQueueFor(cluster), kind: 1 },
    taskQueueType: 1,
  });
  const now = Date.now();
  return (res.pollers ?? []).filter((p) => {
    const at = tsToIso(p.lastAccessTime as never);
    return at === undefined || now - Date.parse(at) < freshSeconds * 1000;
  }).length;
}

function kindOf(type: string): SweepView['kind'] {
  if (type === SNAPSHOT_WORKFLOW_TYPE) return 'snapshot';
  return type === SWEEP_WORKFLOW_TYPE ? 'sweep' : type === SWEEP_ALL_WORKFLOW_TYPE ? 'all' : 'other';
}

function saStrings(desc: WorkflowExecutionDescription): Record<string, string> {
  const out: Record<string, string> = {};
  for (const { key, value } of desc.typedSearchAttributes.getAll()) {
    if (Object.values(SEARCH_ATTRIBUTES).includes(key.name as never))
      out[key.name] = Array.isArray(value) ? value.join(',') : String(value);
  }
  return out;
}

/** Query the progress of a sweep with a deadline (a query waits for a worker to answer it). */
export async function queryProgress(
  client: Client,
  handle: WorkflowHandle,
  timeoutMs = 10_000,
): Promise<SweepProgress> {
  return client.withDeadline(Date.now() + timeoutMs, () => handle.query(progressQuery));
}

export class SweepNotFoundError extends Error {
  constructor(id: string) {
    super(`no sweep with id ${JSON.stringify(id)} on this Temporal namespace; list sweeps with \`infersweep list\``);
    this.name = 'SweepNotFoundError';
  }
}

export interface DescribeOptions {
  /** query progress (default true) */
  query?: boolean;
  /** for `all` sweeps, describe the children too (default true) */
  children?: boolean;
  queryTimeoutMs?: number;
}

/**
 * Everything known about one sweep. A running sweep's progress comes from the `progress` query
 * (a worker must poll); a completed one's from its result, with no worker (points, allocations,
 * search, last message); a failed, cancelled or terminated one has its root cause (./failure.ts)
 * and, while a worker answers, its progress.
 */
export async function describeSweep(s: Session, id: string, opts: DescribeOptions = {}): Promise<SweepView> {
  const handle = s.client.workflow.getHandle(id);
  let desc: WorkflowExecutionDescription;
  try {
    desc = await handle.describe();
  } catch (e) {
    if (e instanceof WorkflowNotFoundError) throw new SweepNotFoundError(id);
    throw e;
  }
  const status = desc.status.name as WorkflowStatusName;
  const sa = saStrings(desc);
  const view: SweepView = {
    workflowId: desc.workflowId,
    runId: desc.runId,
    type: desc.type,
    kind: kindOf(desc.type),
    status,
    uiLink: workflowUiLink(s.target, desc.workflowId, desc.runId),
    taskQueue: desc.taskQueue,
    startTime: desc.startTime.toISOString(),
    closeTime: desc.closeTime?.toISOString(),
    searchAttributes: sa,
    memo: (desc.memo ?? {}) as Record<string, unknown>,
    live: liveDetails(s.client, desc),
    children: [],
  };
  if (status === 'FAILED' || status === 'TERMINATED' || status === 'TIMED_OUT' || status === 'CANCELLED') {
    view.failure = await handle.result().then(
      () => undefined,
      (e: unknown) => failureView(e),
    );
  }
  if (view.kind === 'sweep' && opts.query !== false) {
    if (status === 'COMPLETED') {
      // a completed sweep's result holds what it knew (points, allocations, search, verdict): no worker needed
      view.progress = resultAsProgress((await handle.result()) as SweepResult, sa, desc);
    } else {
      const cluster = sa[SEARCH_ATTRIBUTES.cluster] ?? desc.taskQueue.replace(/^infersweep-/, '');
      const pollers = await activePollers(s.client, s.target.namespace, cluster).catch(() => 1);
      if (pollers > 0) {
        try {
          // a closed sweep's query waits for a worker to replay it: a poller seen lately may be gone
          const timeoutMs = status === 'RUNNING' ? opts.queryTimeoutMs : Math.min(opts.queryTimeoutMs ?? 3000, 3000);
          view.progress = await queryProgress(s.client, handle, timeoutMs);
        } catch (e) {
          view.progressNote = `progress query failed: ${(e as Error).message}`;
        }
      } else {
        view.progressNote = `no worker polls task queue ${taskQueueFor(cluster)}; start one with \`npx nx run worker:serve -- --cluster ${cluster}\` (or \`infersweep watch ${id}\`, which starts one in-process)`;
      }
      if (!view.progress && status !== 'RUNNING') {
        const saved = finalSnapshot(view.memo.resultsDir, desc.startTime);
        if (saved) {
          view.progress = saved.progress;
          view.progressFrom = saved.file;
          view.progressNote = undefined;
        } else
          view.progressNote = `${view.progressNote}; the points it measured are in its results folder: \`infersweep results ${id}\``;
      }
    }
  }
  if (view.kind === 'snapshot' && opts.query !== false) {
    try {
      view.snapshot = (
        status === 'COMPLETED'
          ? await handle.result()
          : await s.client.withDeadline(Date.now() + (opts.queryTimeoutMs ?? 10_000), () => handle.query(snapshotQuery))
      ) as SnapshotProgress;
    } catch (e) {
      view.progressNote = `snapshot query failed (does a worker poll ${desc.taskQueue}?): ${(e as Error).message}`;
    }
  }
  if (view.kind === 'all' && opts.children !== false) {
    view.children = await childSweeps(s, id, opts);
  }
  return view;
}

/**
 * The final state of this run of a closed sweep as the CLI saved it when the sweep ended (the
 * `progress.json` snapshot `sweep`, `watch` and `report` write while a worker answers): a snapshot
 * of an earlier run, or of a phase that is not an end, is not this run's final state.
 */
function finalSnapshot(resultsDir: unknown, runStart: Date): { progress: SweepProgress; file: string } | undefined {
  if (typeof resultsDir !== 'string') return undefined;
  const file = new ResultsLayout(resultsDir).progressSnapshot;
  try {
    const p = JSON.parse(readFileSync(file, 'utf8')) as SweepProgress;
    const ended = ['completed', 'failed', 'cancelled', 'aborted'].includes(p.phase);
    return ended && Array.isArray(p.points) && Date.parse(p.updatedAt) >= runStart.getTime()
      ? { progress: p, file }
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A completed sweep's result shaped as progress: the one source of a completed sweep's state for
 * `status`, `report` and `results` (the workflow returns its points, allocations, search and last
 * message; libs/orchestrator/src/workflows/run.ts `result`).
 */
function resultAsProgress(
  r: SweepResult,
  sa: Record<string, string>,
  desc: WorkflowExecutionDescription,
): SweepProgress {
  return {
    sweepId: r.sweepId,
    configName: sa[SEARCH_ATTRIBUTES.config] ?? '',
    configHash: '',
    planHash: String((desc.memo as Record<string, unknown> | undefined)?.planHash ?? ''),
    orientation: sa[SEARCH_ATTRIBUTES.orientation] ?? '',
    cluster: sa[SEARCH_ATTRIBUTES.cluster] ?? '',
    model: sa[SEARCH_ATTRIBUTES.model] ?? '',
    policy: 'shared-server',
    phase: r.status === 'aborted' ? 'aborted' : 'completed',
    points: r.points,
    allocations: r.allocations,
    ...(r.search ? { search: r.search } : {}),
    ...(r.replicates ? { replicates: r.replicates } : {}),
    ...(r.message ? { message: r.message } : {}),
    maxAllocationAttempts: 0,
    startedAt: desc.startTime.toISOString(),
    updatedAt: (desc.closeTime ?? desc.startTime).toISOString(),
    resultsDir: r.resultsDir,
  };
}

/** The child sweeps of an `--orientation all` parent, in start order. */
export async function childSweeps(s: Session, parentId: string, opts: DescribeOptions = {}): Promise<SweepView[]> {
  const ids: string[] = [];
  for await (const w of s.client.workflow.list({ query: `ParentWorkflowId = ${JSON.stringify(parentId)}` }))
    ids.push(w.workflowId);
  const views = await Promise.all([...new Set(ids)].map((id) => describeSweep(s, id, { ...opts, children: false })));
  return views.sort((a, b) => (a.startTime ?? '').localeCompare(b.startTime ?? ''));
}

export interface ListedSweep {
  workflowId: string;
  runId: string;
  type: string;
  status: string;
  startTime: string;
  closeTime?: string;
  orientation?: string;
  model?: string;
  cluster?: string;
  config?: string;
  sweepStatus?: string;
  uiLink: string;
}

/** Visibility query for sweeps: both workflow types, optional filters (search attributes). */
export function listQuery(f: {
  running?: boolean;
  orientation?: string;
  cluster?: string;
  model?: string;
  config?: string;
  idPrefix?: string;
}): string {
  const q = [`(WorkflowType = '${SWEEP_WORKFLOW_TYPE}' OR WorkflowType = '${SWEEP_ALL_WORKFLOW_TYPE}')`];
  const lit = (v: string) => `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  if (f.running) q.push(`ExecutionStatus = 'Running'`);
  if (f.orientation) q.push(`${SEARCH_ATTRIBUTES.orientation} = ${lit(f.orientation)}`);
  if (f.cluster) q.push(`${SEARCH_ATTRIBUTES.cluster} = ${lit(f.cluster)}`);
  if (f.model) q.push(`${SEARCH_ATTRIBUTES.model} = ${lit(f.model)}`);
  if (f.config) q.push(`${SEARCH_ATTRIBUTES.config} = ${lit(f.config)}`);
  if (f.idPrefix) q.push(`WorkflowId STARTS_WITH ${lit(f.idPrefix)}`);
  return q.join(' AND ');
}

export async function listSweeps(s: Session, query: string, limit = 50): Promise<ListedSweep[]> {
  const out: ListedSweep[] = [];
  for await (const w of s.client.workflow.list({ query })) {
    const get = (k: string) => {
      const v = w.typedSearchAttributes.getAll().find((p) => p.key.name === k)?.value;
      return v === undefined ? undefined : String(v);
    };
    out.push({
      workflowId: w.workflowId,
      runId: w.runId,
      type: w.type,
      status: w.status.name,
      startTime: w.startTime.toISOString(),
      closeTime: w.closeTime?.toISOString(),
      orientation: get(SEARCH_ATTRIBUTES.orientation),
      model: get(SEARCH_ATTRIBUTES.model),
      cluster: get(SEARCH_ATTRIBUTES.cluster),
      config: get(SEARCH_ATTRIBUTES.config),
      sweepStatus: get(SEARCH_ATTRIBUTES.status),
      uiLink: workflowUiLink(s.target, w.workflowId, w.runId),
    });
    if (out.length >= limit) break;
  }
  return out;
}

/** The most recently started sweep (either type), or undefined. */
export async function latestSweepId(s: Session): Promise<string | undefined> {
  const [first] = await listSweeps(s, listQuery({}), 1);
  return first?.workflowId;
}

export { temporalTarget, workflowUiLink, taskQueueFor };
