/**
 * The activity surface the sweep workflow calls (type-only import from workflow code).
 * Every input/output is plain JSON: it crosses the Temporal boundary.
 */
import type { AllocationEnd, DeploymentPolicy, PointSummary } from '@infersweep/sweep';

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
}

export interface Allocation {
  jobId: string;
  jobName: string;
  nodes: string[];
  headNode: string;
  timeLimitMinutes: number;
  grantedAt: string;
}

export interface PointRequest {
  sweepId: string;
  planHash: string;
  plan: unknown;
  deployment: Deployment;
  concurrency: number;
  attempt: number;
  allocationAttempt: number;
  policy: DeploymentPolicy;
  pointBudgetSeconds: number;
  resultsDir: string;
  /** true when this server already served a point (the drain gate then runs first) */
  serverUsed: boolean;
}

export interface SweepActivities {
  prepareSweep(input: { sweepId: string; planHash: string; plan: unknown; resultsDir: string; points: number[] }): Promise<PointSummary[]>;
  importImage(input: { sweepId: string; plan: unknown }): Promise<{ squashPath?: string; note: string }>;
  allocate(input: { sweepId: string; plan: unknown; jobName: string; attempt: number }): Promise<Allocation>;
  launchServer(input: { sweepId: string; plan: unknown; allocation: Allocation; serverIndex: number; resultsDir: string }): Promise<Deployment>;
  waitReady(input: { plan: unknown; deployment: Deployment; startupBudgetSeconds: number }): Promise<{ seconds: number }>;
  runPoint(input: PointRequest): Promise<PointSummary>;
  captureLogs(input: { plan: unknown; deployment: Deployment; destDir: string; reason: string }): Promise<{ files: string[]; tails: Record<string, string> }>;
  stopServer(input: { plan: unknown; deployment: Deployment }): Promise<void>;
  release(input: { plan: unknown; jobId?: string; jobName: string }): Promise<{ ended: AllocationEnd; state: string; reason?: string }>;
}
