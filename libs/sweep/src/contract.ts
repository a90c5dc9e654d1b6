/**
 * The sweep contract: what the workflow, the worker's activities and the CLI agree on.
 * Pure and workflow-safe (no I/O, no Node built-ins): the workflow bundle imports it.
 */
import type { AllocationEnd, AttemptClass } from '@infersweep/core';
import type { PlanReplicates, PlanSearch, ReplicateMetric, SweepPlan } from '@infersweep/topology';
import type { AttemptAction } from './attempt-decision';
import type { GpuLedger } from './ledger';

export type { AllocationEnd };

/** How a concurrency point stands. `invalid` = it ran but a validity gate failed (reasons kept). */
export type PointStatus = 'pending' | 'running' | 'done' | 'invalid' | 'failed' | 'skipped';

/** How points share servers and allocations: the union the config schema defines (libs/topology). */
export type DeploymentPolicy = SweepPlan['deployment']['policy'];

/** A compact summary of one point's result (the full record lives in `resultPath`); built by libs/agentx `pointSummary`. */
export interface PointSummary {
  concurrency: number;
  valid: boolean;
  reasons: string[];
  resultPath: string;
  /** true when the activity found a valid result of this point (same sweep, same plan) and did not rerun it */
  reused: boolean;
  jobId?: string;
  nodes?: string[];
  attempt?: number;
  gpuCount?: number;
  requestsProfiled?: number;
  requestsFailed?: number;
  /** the per-request JSONL next to the record */
  requestsJsonl?: string;
  outputThroughputPerGpu?: number;
  /** input + output tokens/s per GPU (InferenceX `tput_per_gpu`) */
  totalThroughputPerGpu?: number;
  /** tok/s/user at p50 (1/ITL) */
  interactivityP50?: number;
  /** InferenceX's AgentX axis: 1 / p90(E2EL/OSL) over successful requests, tok/s/user */
  e2eNormInteractivityP90?: number;
  /** per-request SLO attainment, when the config gives goodput bounds (search.slo.goodput) */
  goodput?: PointGoodput;
  ttftP50Ms?: number;
  ttftP99Ms?: number;
  itlP50Ms?: number;
  itlP99Ms?: number;
  e2elP50Ms?: number;
  e2elP99Ms?: number;
  /**
   * The SD of the log of each latency statistic over bootstrap resamples of the point's requests
   * (libs/agentx `sloUncertainty`): the search's per-point uncertainty. Absent: a point estimate only.
   */
  logSe?: Partial<Record<SloStatistic, number>>;
  /** speculative decoding: mean tokens per verification step over the window (vLLM's spec-decode counters); absent without */
  specAcceptanceLength?: number;
  /** the record's warnings (a collapsed stream under the gate's share, an acceptance drift, dropped metric samples); absent when none */
  warnings?: string[];
  /** seconds of the point's activity spent waiting for the drain gate and warming up (the GPU-hour ledger splits the point's time by them) */
  phaseSeconds?: { drain?: number; warmup?: number };
}

/** The summary statistics an SLO bound reads (PointSummary fields). */
export type SloStatistic =
  'ttftP50Ms' | 'ttftP99Ms' | 'itlP50Ms' | 'itlP99Ms' | 'e2elP50Ms' | 'e2elP99Ms' | 'e2eNormInteractivityP90';

/** Good requests (every per-request bound met) of the profiled requests, with a Wilson interval. */
export interface PointGoodput {
  good: number;
  total: number;
  attainment: number;
  lower: number;
  upper: number;
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
  /** added by the adaptive search (./search.ts), not configured; absent: a configured point */
  origin?: 'search';
  /** why the search added it, and the measured points that led there */
  searchReason?: string;
  searchEvidence?: string[];
  /**
   * Earlier windows of this point, oldest first, superseded by a re-measure the search asked for (a
   * fresh window on the same allocation: the point was invalid for a reason that is not load, or it
   * contradicted the monotone fit, or its pass/fail was a coin flip). The search weighs them all.
   */
  windows?: PointWindow[];
  /** every failed attempt of the point, classified, with what the sweep did about it (at most the last 10) */
  failures?: AttemptRecord[];
}

/** One measured window of a point (the current one is the PointState's own status and summary). */
export interface PointWindow {
  status: PointStatus;
  summary?: PointSummary;
  lastError?: string;
  finishedAt?: string;
  /** why the search measured this point again after this window */
  remeasureReason: string;
}

/** One failed attempt: its class (libs/core/src/attempt-class.ts) and the decision (./attempt-decision.ts). */
export interface AttemptRecord {
  class: AttemptClass;
  /** the rule that decided the class, and the line or state it matched */
  rule: string;
  evidence?: string;
  /** the nodes the failure implicates; quarantined: those that were quarantined for it */
  nodes: string[];
  quarantined?: string[];
  action: AttemptAction;
  why: string;
  jobId?: string;
  at: string;
}

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
  /** what went wrong without ending it, e.g. a failed log capture (libs/orchestrator/src/workflows/lease.ts) */
  warnings?: string[];
  /** nodes it was asked to exclude (`--exclude`: the worker's quarantine, independent replicates; empty: the partition had too few others) */
  excluded?: string[];
  /** the local stack's speed multiplier on the simulator's latencies for this allocation (the truth of its replicates) */
  speedMultiplier?: number;
  /** what broke when the allocation ended badly (libs/core/src/attempt-class.ts) */
  failureClass?: AttemptClass;
  /** true when the attempt failed because the cluster was unavailable (a ClusterUnavailableError: login host unreachable, partition down) */
  clusterUnavailable?: boolean;
  /** GPUs it held (the plan's nodes × GPUs per node), and for how long (Slurm's start to end when known) */
  gpus?: number;
  heldSeconds?: number;
}

/** What the workflow needs to search: the plan's `search` block (libs/topology plan/plan-search.ts). */
export type SweepSearch = Pick<
  PlanSearch,
  | 'goal'
  | 'slo'
  | 'minConcurrency'
  | 'maxConcurrency'
  | 'maxAddedPoints'
  | 'gpuHourBudget'
  | 'resolution'
  | 'pointGpuHours'
>;

/** Two measured points around a boundary: `below` met it, `above` did not. */
export interface Bracket {
  /** the answer: the SLO limit (= below) or the knee; null when no point meets the SLO */
  concurrency: number | null;
  below?: number;
  above?: number;
  /**
   * found: bracketed to the resolution; at-max: maxConcurrency meets it; never-meets: minConcurrency
   * fails; client-bound: the client could not hold the concurrency above `below` (a client-side
   * limit, not the server's); unresolved: stopped by a bound first
   */
  status: 'found' | 'at-max' | 'never-meets' | 'client-bound' | 'unresolved';
  text: string;
  /**
   * The SLO limit's 95 % interval: the largest measured concurrency confidently meeting the SLO and
   * one less than the smallest confidently failing it (null: no such point; upper null = unbounded
   * by the measured points). The knee's: the smallest and largest candidate.
   */
  ci?: { lower: number | null; upper: number | null };
  /** the bound that fails first at `above` (e.g. "TTFT p99"), or "saturation" */
  binding?: string;
  /** the knee's candidate points (each a knee within the noise) */
  candidates?: number[];
}

/** The search's standing: the brackets so far and, once it ended, why (SweepProgress.search; decided by ./search.ts). */
export interface SearchResult {
  limit?: Bracket;
  knee?: Bracket;
  /** why the search ended; absent while it is still adding points */
  stoppedBy?: 'resolved' | 'max-points' | 'gpu-hour-budget';
  pointsAdded: number;
}

// ---------------------------------------------------------------- replicates (./replicates.ts decides)

/** What the workflow needs: the plan's `replicates` block (libs/topology plan/plan-replicates.ts). */
export type SweepReplicates = Pick<PlanReplicates, 'points' | 'min' | 'max' | 'target' | 'independentAllocations'>;

/** One settled replicate: where and what it measured (values: the summary's metrics). */
export interface Replicate {
  jobId: string;
  nodes: string[];
  resultPath: string;
  values: Partial<Record<ReplicateMetric, number>>;
}

/** A point's CI over its replicates for one metric (mean over allocations, t-interval). */
export interface ReplicateStat {
  n: number;
  mean: number;
  lower: number;
  upper: number;
  halfWidth: number;
  relativeHalfWidth: number;
  /** the coverage the interval is published with (0.95) */
  level: number;
  /** the precision target of this metric, when the config sets one */
  target?: number;
}

export type ReplicationStatus = 'replicating' | 'target-met' | 'max-reached' | 'fixed-n' | 'failed';

export interface ReplicatedPoint {
  concurrency: number;
  status: ReplicationStatus;
  /** settled replicates, in order; [0] is the first pass */
  replicates: Replicate[];
  /** the replicate being measured (its own attempts and errors; a point state like the first pass's) */
  current?: PointState;
  stats: Partial<Record<ReplicateMetric, ReplicateStat>>;
  /** why it stopped short (failed: the replicate's error) or why the target was not met */
  note?: string;
}

/** SweepProgress.replicates: absent until the first pass has settled. */
export interface ReplicatesProgress {
  points: ReplicatedPoint[];
  /** configured entries that named no point (a search without an answer, an unmeasured point) */
  unresolved?: string[];
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
export interface SweepProgress extends Pick<
  SweepInput,
  | 'sweepId'
  | 'configName'
  | 'configHash'
  | 'planHash'
  | 'orientation'
  | 'cluster'
  | 'model'
  | 'policy'
  | 'maxAllocationAttempts'
  | 'resultsDir'
> {
  phase: SweepPhase;
  currentPoint?: number;
  allocation?: { jobId: string; nodes: string[]; attempt: number; grantedAt: string; timeLimitMinutes: number };
  points: PointState[];
  allocations: AllocationRecord[];
  awaitingOperator?: { reason: string; since: string };
  abortRequested?: string;
  /** the adaptive search's brackets so far, and why it ended (SweepInput.search; absent until its first decision) */
  search?: SearchResult;
  /** replicates across allocations (SweepInput.replicates; absent until the first pass has settled) */
  replicates?: ReplicatesProgress;
  /** where the GPU time the allocations held went (./ledger.ts); absent in sweeps started before it existed */
  ledger?: GpuLedger;
  /** the last failed attempt outside a point (allocation, image, launch, readiness), classified */
  setupFailures?: AttemptRecord[];
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
  /** the validated plan: prepareSweep stores it, later activities read it by reference (planHash + resultsDir) */
  plan: SweepPlan;
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
  /** a fresh allocation after this many points (plan.deployment.pointsPerAllocation); absent: policy decides */
  pointsPerAllocation?: number;
  /** where the import runs: on the login node once before allocating (default), or on each allocation's head node */
  importImageOn?: 'login' | 'head-node';
  /** how long to wait for an operator before failing, e.g. '24 hours' */
  operatorTimeout?: string;
  /**
   * The starting deployment's tag (libs/core deploymentTag: Temporal namespace + configured id), in
   * every allocation's job name so the janitor of another deployment sharing the login account
   * never takes these jobs for its own orphans.
   */
  deploymentTag: string;
  /** adaptive points after the configured ones (the plan's search block); absent: the configured points only */
  search?: SweepSearch;
  /** replicates across allocations after the first pass (the plan's replicates block); absent: one measurement per point */
  replicates?: SweepReplicates;
  /**
   * The scheduled run this sweep is one orientation of (set by sweepAllWorkflow for a schedule's run):
   * the sweep stores its points and that run judges all its sweeps as one family (docs/history.md "A
   * scheduled night is one family"). Absent: an ad-hoc sweep, judged on its own.
   */
  night?: NightOf;
}

/** A schedule's run: the schedule's id (`infersweep schedule`) and the run's workflow id. */
export interface NightOf {
  schedule: string;
  runId: string;
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
  /**
   * The id of the schedule that starts these runs (apps/cli `schedule create`): each run is a night,
   * its sweeps carry {@link SweepInput.night} and the run judges them as one family. Absent: ad-hoc.
   */
  schedule?: string;
}

export interface SweepResult {
  sweepId: string;
  status: 'completed' | 'aborted';
  points: PointState[];
  allocations: AllocationRecord[];
  resultsDir: string;
  /** points with a new regression against the history of their series (InfersweepRegression); absent: not judged */
  regressions?: number;
  /** points that could not be measured (invalid or failed) while their series could: a finding, never a pass */
  unmeasured?: number;
  /** the search's brackets and why it ended (SweepProgress.search); absent: no search, or a sweep closed before it was returned */
  search?: SearchResult;
  /** the replicated points with their CIs (SweepProgress.replicates); absent: no replicates */
  replicates?: ReplicatesProgress;
  /** the sweep's last message (SweepProgress.message), e.g. its verdict against the history */
  message?: string;
  /** the GPU-hour ledger (SweepProgress.ledger) */
  ledger?: GpuLedger;
  /** the paired A/B of a flagged regression (libs/sweep/src/confirm.ts): its outcome and first bad image */
  confirmation?: { confirmId: string; outcome: 'confirmed' | 'cleared' | 'failed'; culprit?: string; error?: string };
}

/** How one orientation's child sweep of `sweepAllWorkflow` ended (the parent's result has one per orientation). */
export interface ChildSweepOutcome {
  orientation: string;
  sweepId: string;
  resultsDir: string;
  status: 'completed' | 'aborted' | 'failed' | 'cancelled';
  /** the child's result when it returned one */
  result?: SweepResult;
  /** why it failed or was cancelled */
  error?: string;
}

/** What a verdict found: regressed points, unmeasured points and failed sweeps (each absent: 0). */
export interface VerdictCounts {
  regressions?: number;
  unmeasured?: number;
  failed?: number;
}

/**
 * The InfersweepRegression search attribute: `none` only when nothing was found, else the findings,
 * e.g. `2`, `unmeasured:3`, `2,unmeasured:3,failed:1` (a number alone: regressed points, as before).
 */
export function verdictLabel(c: VerdictCounts): string {
  const parts = [
    ...(c.regressions ? [String(c.regressions)] : []),
    ...(c.unmeasured ? [`unmeasured:${c.unmeasured}`] : []),
    ...(c.failed ? [`failed:${c.failed}`] : []),
  ];
  return parts.length === 0 ? 'none' : parts.join(',');
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
  /** a run's verdict against the history of its series: `none`, or its findings (verdictLabel: `N`, `unmeasured:M`, `failed:K`) */
  regression: 'InfersweepRegression',
} as const;
