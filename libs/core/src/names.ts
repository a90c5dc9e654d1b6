/**
 * Names infersweep gives things on Temporal and Slurm: workflow types and ids, task queues, Slurm
 * job names. One place, so the CLI, the workflows, the activities and the janitor agree.
 */
import { fnv1a32 } from './hash';

export const SWEEP_WORKFLOW_TYPE = 'sweepWorkflow';
export const SWEEP_ALL_WORKFLOW_TYPE = 'sweepAllWorkflow';
export const SNAPSHOT_WORKFLOW_TYPE = 'snapshotWorkflow';

/** One task queue per cluster profile: the worker for it holds that cluster's executor. */
export function taskQueueFor(cluster: string): string {
  return `infersweep-${cluster}`;
}

/** Job-name prefix of every allocation infersweep makes (the janitor looks for it). */
export const JOB_NAME_PREFIX = 'infersweep-';

/** `s` with every run of characters outside `[A-Za-z0-9._-]` replaced by `-` (Temporal ids, folder names). */
export function safeName(s: string): string {
  return s.replace(/[^A-Za-z0-9._-]+/g, '-');
}

/** Workflow id from config + orientation + cluster + run label (Temporal-safe characters only). */
export function sweepWorkflowId(configName: string, orientation: string, cluster: string, label: string): string {
  return `sweep-${safeName(configName)}-${safeName(orientation)}-${safeName(cluster)}-${safeName(label)}`;
}

/** The id of one orientation's child sweep in a scheduled run of `sweepAllWorkflow`. */
export function childSweepId(parentWorkflowId: string, orientation: string): string {
  return safeName(`${parentWorkflowId}-${orientation}`);
}

/**
 * The deployment an infersweep installation is: its Temporal namespace plus a configured id
 * (INFERSWEEP_DEPLOYMENT_ID, default `default`), as a tag in every job name it creates, e.g.
 * `team-a.3f9c1e`. Two deployments sharing one login account (and even one namespace name on two
 * Temporal servers, given different ids) never see each other's jobs as their own: the janitor only
 * judges jobs that carry its own tag.
 */
export function deploymentTag(namespace: string, deploymentId: string): string {
  if (!deploymentId.trim()) throw new TypeError('deployment id must not be empty');
  const readable = deploymentId.replace(/[^A-Za-z0-9_-]+/g, '-').slice(0, 16);
  return `${readable}.${fnv1a32(`${namespace}\n${deploymentId}`).slice(0, 6)}`;
}

/** Job-name prefix of every allocation of one deployment: `infersweep-<tag>-`. */
export function deploymentJobPrefix(tag: string): string {
  return `${JOB_NAME_PREFIX}${tag}-`;
}

/**
 * A unique, Slurm-safe job name for allocation attempt `attempt` of a sweep:
 * `infersweep-<deployment tag>-<sweep id tail>-<hash>-a<attempt>`.
 */
export function allocationJobName(sweepId: string, attempt: number, tag: string): string {
  // short stable hash of the sweep id keeps names unique and below Slurm's limits
  return `${deploymentJobPrefix(tag)}${jobNameStem(sweepId)}-a${attempt}`;
}

/** The part of an allocation's job name that names its sweep: the id's readable tail and its hash. */
function jobNameStem(sweepId: string): string {
  const tail = sweepId
    .replace(/^sweep-/, '')
    .replace(/[^A-Za-z0-9-]+/g, '-')
    .slice(0, 40);
  return `${tail}-${fnv1a32(sweepId)}`;
}

/** True when `jobName` is an allocation name of sweep `sweepId` (any deployment tag, any attempt). */
export function isAllocationOf(jobName: string, sweepId: string): boolean {
  if (!jobName.startsWith(JOB_NAME_PREFIX)) return false;
  const m = /-a\d+$/.exec(jobName);
  return m !== null && jobName.slice(0, m.index).endsWith(`-${jobNameStem(sweepId)}`);
}

/** The Slurm step name of server `serverIndex`'s rank `rank`. */
export function serverStepName(serverIndex: number, rank: number): string {
  return `infersweep-server${serverIndex}-r${rank}`;
}

/** The Slurm step name of server `serverIndex`'s P/D router (a step beside its ranks). */
export function routerStepName(serverIndex: number): string {
  return `infersweep-server${serverIndex}-router`;
}
