/**
 * The sweep contract: what the workflow, the worker's activities and the CLI agree on.
 * Pure and workflow-safe (no I/O, no Node built-ins): the workflow bundle imports it.
 */

/** How a concurrency point stands. `invalid` = it ran but a validity gate failed (reasons kept). */
export type PointStatus = 'pending' | 'running' | 'done' | 'invalid' | 'failed' | 'skipped';

export type DeploymentPolicy = 'shared-server' | 'server-per-point' | 'allocation-per-point';

/** A compact summary of one point's result (the full record lives in `resultPath`). */
export interface PointSummary {
  concurrency: number;
  valid: boolean;
  reasons: string[];
  resultPath: string;
  /** true when the activity found a valid result of this point (same sweep, same plan) and did not rerun it */
  reused: boolean;
  jobId?: string;
  attempt?: number;
  requestsProfiled?: number;
  outputThroughputPerGpu?: number;
  totalThroughputPerGpu?: number;
  interactivityP50?: number;
  ttftP50Ms?: number;
  e2elP50Ms?: number;
}

export interface PointState {
  concurrency: number;
  status: PointStatus;
  attempts: number;
  resultPath?: string;
  summary?: PointSummary;
  lastError?: string;
  startedAt?: string;
  finishedAt?: string;
  /** allocation (job id) the point last ran on */
  jobId?: string;
}

/** How an allocation ended (Slurm's terminal state, or why infersweep let it go). */
export type AllocationEnd =
  | 'released'
  | 'TIMEOUT'
  | 'NODE_FAIL'
  | 'CANCELLED'
  | 'PREEMPTED'
  | 'FAILED'
  | 'GONE'
  | 'insufficient-time'
  | 'server-lost'
  | 'launch-failed'
  | 'allocation-failed';

export interface AllocationRecord {
  attempt: number;
  jobName: string;
  jobId?: string;
  nodes: string[];
  requestedAt: string;
  grantedAt?: string;
  endedAt?: string;
  ended?: AllocationEnd;
  reason?: string;
}

export type SweepPhase =
  | 'starting'
  | 'importing-image'
  | 'allocating'
  | 'launching'
  | 'waiting-ready'
  | 'running-point'
  | 'recovering'
  | 'awaiting-operator'
  | 'cleaning-up'
  | 'completed'
  | 'failed'
  | 'cancelled'
  | 'aborted';

/** The `progress` query's answer; also the workflow's whole state. */
export interface SweepProgress
  extends Pick<SweepInput, 'sweepId' | 'configName' | 'configHash' | 'planHash' | 'orientation' | 'cluster' | 'model' | 'policy' | 'maxAllocationAttempts' | 'resultsDir'> {
  phase: SweepPhase;
  currentPoint?: number;
  allocation?: { jobId: string; nodes: string[]; attempt: number; grantedAt: string; timeLimitMinutes: number };
  points: PointState[];
  allocations: AllocationRecord[];
  awaitingOperator?: { reason: string; since: string };
  abortRequested?: string;
  startedAt: string;
  updatedAt: string;
  message?: string;
}

/** What the caller resolves before starting a sweep (so a running sweep is immune to config edits). */
export interface SweepInput {
  sweepId: string;
  label: string;
  configName: string;
  /** content hash of the config file as the caller read it */
  configHash: string;
  planHash: string;
  orientation: string;
  cluster: string;
  model: string;
  image: string;
  /** the validated plan (libs/topology SweepPlan), opaque to the workflow, passed to activities */
  plan: unknown;
  points: number[];
  policy: DeploymentPolicy;
  /** seconds one point needs (warmup + profile + drain), for the time guard */
  pointBudgetSeconds: number;
  /** seconds the server needs to come up (readiness deadline) */
  startupBudgetSeconds: number;
  timeLimitMinutes: number;
  maxAllocationAttempts: number;
  maxPointAttempts: number;
  /** where results go on shared storage: <resultsDir>/points/c<N>.json */
  resultsDir: string;
  /** image import needed (pyxis) or not (host runtime) */
  importImage: boolean;
  /** how long to wait for an operator before failing, e.g. '24 hours' */
  operatorTimeout?: string;
}

/** Input of the parent workflow for `--orientation all`. */
export interface SweepAllInput {
  sweeps: SweepInput[];
  /** 1 = one orientation after another (default) */
  maxConcurrentSweeps: number;
  /**
   * Set by schedules (one frozen input, many runs): each run gets its own sweep ids and results
   * folders, derived from this workflow's id (a schedule appends the run's time to it): child id
   * `<parent workflow id>-<orientation>`, results in `<resultsRoot>/<child id>`. Absent: the
   * children use their inputs as given.
   */
  perRun?: { resultsRoot: string };
}

export interface SweepResult {
  sweepId: string;
  status: 'completed' | 'aborted';
  points: PointState[];
  allocations: AllocationRecord[];
  resultsDir: string;
}

// ---------------------------------------------------------------- messages (names only; the
// workflow defines handlers, the CLI calls them by the same definitions in ./messages)
export const PROGRESS_QUERY = 'progress';
export const SKIP_POINT_UPDATE = 'skipPoint';
export const RETRY_NOW_UPDATE = 'retryNow';
export const ABORT_UPDATE = 'abort';

// ---------------------------------------------------------------- search attributes (Keyword)
export const SEARCH_ATTRIBUTES = {
  orientation: 'InfersweepOrientation',
  model: 'InfersweepModel',
  cluster: 'InfersweepCluster',
  config: 'InfersweepConfig',
  status: 'InfersweepStatus',
} as const;

export const SWEEP_WORKFLOW_TYPE = 'sweepWorkflow';
export const SWEEP_ALL_WORKFLOW_TYPE = 'sweepAllWorkflow';

/** One task queue per cluster profile: the worker for it holds that cluster's executor. */
export function taskQueueFor(cluster: string): string {
  return `infersweep-${cluster}`;
}

/** Job-name prefix of every allocation infersweep makes (the janitor looks for it). */
export const JOB_NAME_PREFIX = 'infersweep-';

/** Workflow id from config + orientation + cluster + run label (Temporal-safe characters only). */
export function sweepWorkflowId(configName: string, orientation: string, cluster: string, label: string): string {
  const safe = (s: string) => s.replace(/[^A-Za-z0-9._-]+/g, '-');
  return `sweep-${safe(configName)}-${safe(orientation)}-${safe(cluster)}-${safe(label)}`;
}

/** A unique, Slurm-safe job name for allocation attempt `attempt` of a sweep. */
export function allocationJobName(sweepId: string, attempt: number): string {
  // short stable hash of the sweep id keeps names unique and below Slurm's limits
  let h = 0x811c9dc5;
  for (let i = 0; i < sweepId.length; i++) {
    h ^= sweepId.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  const tail = sweepId.replace(/^sweep-/, '').replace(/[^A-Za-z0-9-]+/g, '-').slice(0, 40);
  return `${JOB_NAME_PREFIX}${tail}-${h.toString(16).padStart(8, '0')}-a${attempt}`;
}

// ---------------------------------------------------------------- error types (ApplicationFailure.type)
/** The allocation or the server went away: clean up, re-allocate, resume at the first unfinished point. */
export const LOSS_ERROR_TYPES = ['AllocationLostError', 'ServerLostError', 'InsufficientTimeError'] as const;
/** Never retried: the input is wrong, retrying cannot help. */
export const NON_RETRYABLE_ERROR_TYPES = [
  'ConfigError',
  'TopologyError',
  'PlanError',
  'InvalidPlanError',
  'ImageMissingError',
  'SshHostKeyError',
] as const;
