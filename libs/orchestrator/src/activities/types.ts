/**
 * The activity surface the sweep workflow calls (type-only import from workflow code), one
 * interface per concern: results store, allocation, server, point. Every input/output is plain
 * JSON: it crosses the Temporal boundary and is stored in the workflow history, so activities take
 * a {@link PlanRef} to the stored plan instead of the plan itself.
 */
import type { AttemptClass } from '@infersweep/core';
import type { AllocationEnd, DeploymentPolicy, PointSummary, QuarantineStep } from '@infersweep/sweep';
import type { HistoryActivities } from './history';

export interface StepRef {
  jobId: string;
  node: string;
  stepName: string;
  logFile: string;
  rank: number;
  /** pid of the detached srun on the login node */
  launcherPid?: number;
}

/** A launched server: where it runs and how to reach it. */
export interface Deployment {
  jobId: string;
  nodes: string[];
  headNode: string;
  serverIndex: number;
  steps: StepRef[];
  endpoints: string[];
  metricsEndpoints: string[];
  /** DP engine ids the checks expect; null when the engine family exposes no per-engine label */
  expectedEngines: number[] | null;
  logDir: string;
  launchedAt: string;
  /** the local stack's per-allocation speed multiplier on the simulator's latencies (engineOverride.allocationSpeed) */
  speedMultiplier?: number;
  /** headers the client sends with every request (a P/D router's prefillers: SweepPlan disaggregation.router.requestHeaders) */
  requestHeaders?: Record<string, string>;
}

export interface Allocation {
  jobId: string;
  jobName: string;
  nodes: string[];
  headNode: string;
  timeLimitMinutes: number;
  grantedAt: string;
  /** the nodes this allocation was asked to exclude: the worker's quarantine, and an independent replicate's last nodes (empty: the partition had too few others) */
  excluded?: string[];
}

/** The stored plan of a sweep: `<resultsDir>/plan.json`, whose planHash must match. */
export interface PlanRef {
  planHash: string;
  resultsDir: string;
}

/** The plan an activity works from: the sweep's stored plan, by reference (./plans.ts). */
export interface PlanInput {
  planRef: PlanRef;
}

export type PointRequest = PlanInput & {
  sweepId: string;
  planHash: string;
  deployment: Deployment;
  concurrency: number;
  attempt: number;
  allocationAttempt: number;
  policy: DeploymentPolicy;
  pointBudgetSeconds: number;
  resultsDir: string;
  /** true when this server already served a point (the drain gate then runs first) */
  serverUsed: boolean;
  /**
   * The point's window when the search measures it again (2, …): a fresh measurement in its own
   * folder (ResultsLayout.pointDir), never a stored result. Absent: the first window.
   */
  window?: number;
  /** replicate k ≥ 2 of the point (the replicates block): its own folder, never a reused result */
  replicate?: number;
};

export interface ReleaseResult {
  ended: AllocationEnd;
  state: string;
  reason?: string;
  /** seconds the job held its nodes by slurmctld's start and end times (absent: Slurm no longer knew) */
  heldSeconds?: number;
}

/** The results folder: what is already measured, and the stored plan. */
export interface ResultsActivities {
  prepareSweep(input: {
    sweepId: string;
    planHash: string;
    plan: unknown;
    resultsDir: string;
    points: number[];
  }): Promise<PointSummary[]>;
}

/** Slurm allocations: get one (adopting a job of the same name), give it back. */
export interface AllocationActivities {
  allocate(
    input: PlanInput & {
      sweepId: string;
      jobName: string;
      attempt: number;
      /** nodes to exclude where the partition has enough others (independent replicates) */
      avoidNodes?: string[];
    },
  ): Promise<Allocation>;
  release(input: PlanInput & { jobId?: string; jobName: string }): Promise<ReleaseResult>;
}

/** The inference server on an allocation: image, launch, readiness, logs, stop. */
export interface ServerActivities {
  /** With `allocation`: on its head node under srun (plan.slurm.imageImport.on = head-node). */
  importImage(
    input: PlanInput & { sweepId: string; allocation?: Allocation },
  ): Promise<{ squashPath?: string; note: string }>;
  launchServer(
    input: PlanInput & { sweepId: string; allocation: Allocation; serverIndex: number; resultsDir: string },
  ): Promise<Deployment>;
  waitReady(input: PlanInput & { deployment: Deployment; startupBudgetSeconds: number }): Promise<{ seconds: number }>;
  captureLogs(
    input: PlanInput & { deployment: Deployment; destDir: string; reason: string },
  ): Promise<{ files: string[]; tails: Record<string, string> }>;
  stopServer(input: PlanInput & { deployment: Deployment }): Promise<void>;
}

/** One ConcurrencyPoint: time guard, drain gate, the AgentX client, the record. */
export interface PointActivities {
  runPoint(input: PointRequest): Promise<PointSummary>;
}

/** The worker's node quarantine (./quarantine.ts, ../quarantine.ts). */
export interface QuarantineActivities {
  /** Record a failed attempt's suspects: a strike each, quarantine by the rule; the nodes now quarantined. */
  implicateNodes(
    input: PlanInput & {
      sweepId: string;
      nodes: string[];
      /** the failed attempt's allocation's nodes, when it had one: candidates for a node failure */
      allocationNodes?: string[];
      step: QuarantineStep;
      class: AttemptClass;
      rule: string;
      evidence?: string;
      jobId?: string;
    },
  ): Promise<{ quarantined: string[] }>;
}

/** The confirmation's own verb (./confirm.ts): an A/B arm's plan, staged like a sweep's. */
export interface ConfirmActivities {
  /** The arm's plan stored as `<resultsDir>/plan.json` (the folder claimed for `sweepId`), by reference. */
  stageArm(input: {
    sweepId: string;
    base: PlanRef;
    image: string;
    pairs: number;
    concurrency: number;
    resultsDir: string;
  }): Promise<PlanRef>;
}

export type SweepActivities = ResultsActivities &
  AllocationActivities &
  ServerActivities &
  PointActivities &
  HistoryActivities &
  QuarantineActivities &
  ConfirmActivities;
