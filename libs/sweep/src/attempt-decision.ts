/**
 * What the sweep does about a failed attempt, from its class (libs/core/src/attempt-class.ts) and
 * where the sweep stands: retry on the same allocation, re-place the point on a new allocation,
 * fail the point, or wait for an operator; and whether the nodes the failure names are suspects
 * (quarantined at once, or given a strike: two strikes quarantine, libs/orchestrator's quarantine).
 * Pure: the workflow calls it (libs/orchestrator/src/workflows/attempt-recovery.ts).
 */
import type { AttemptClass } from '@infersweep/core';

export type AttemptAction = 'retry-here' | 're-place' | 'fail-point' | 'wait-operator';

/** `now`: quarantine the implicated nodes; `strike`: one strike against each (two quarantine); `none`. */
export type QuarantineStep = 'now' | 'strike' | 'none';

export interface AttemptSituation {
  class: AttemptClass;
  /** a point was running (`point`) or the allocation, image, launch or readiness failed (`setup`) */
  during: 'point' | 'setup';
  /** point attempts so far, this one included (0 during setup) */
  pointAttempts: number;
  maxPointAttempts: number;
}

export interface AttemptDecision {
  action: AttemptAction;
  quarantine: QuarantineStep;
  /** one sentence for the progress message and the point's record */
  why: string;
}

/** Per class: what a failure during a point and during setup leads to, and the nodes' fate. */
const TABLE: Record<
  AttemptClass,
  { point: AttemptAction; setup: AttemptAction; quarantine: QuarantineStep; why: string }
> = {
  'node-health': {
    point: 're-place',
    setup: 're-place',
    quarantine: 'now',
    why: 'the node failed: re-placed on other nodes',
  },
  nccl: {
    point: 're-place',
    setup: 're-place',
    quarantine: 'strike',
    why: 'NCCL/RDMA between the ranks failed: re-placed, a strike against the nodes',
  },
  scheduler: { point: 're-place', setup: 're-place', quarantine: 'none', why: 'Slurm ended the job: re-placed' },
  'cuda-oom': {
    point: 'fail-point',
    setup: 'wait-operator',
    quarantine: 'none',
    why: 'out of GPU memory: deterministic at this load, not retried',
  },
  'host-oom': {
    point: 'fail-point',
    setup: 'wait-operator',
    quarantine: 'none',
    why: 'out of host memory: deterministic at this load, not retried',
  },
  'engine-crash': {
    point: 'retry-here',
    setup: 're-place',
    quarantine: 'strike',
    why: 'the engine exited: restarted, a strike against its node',
  },
  image: { point: 'retry-here', setup: 'wait-operator', quarantine: 'strike', why: 'the image could not be imported' },
  network: { point: 'retry-here', setup: 'retry-here', quarantine: 'none', why: 'DNS or a connection failed: retried' },
  client: { point: 'retry-here', setup: 'retry-here', quarantine: 'none', why: 'the load client failed: retried' },
  'zero-output': {
    point: 'fail-point',
    setup: 'fail-point',
    quarantine: 'none',
    why: 'no output tokens: no measurement',
  },
  setup: {
    point: 'fail-point',
    setup: 'wait-operator',
    quarantine: 'none',
    why: 'a program the plan runs is not on the cluster',
  },
  unknown: { point: 'retry-here', setup: 'retry-here', quarantine: 'none', why: 'no rule knows this failure: retried' },
};

/**
 * The decision for one failed attempt. A point retried here that has used its attempts fails
 * instead (the sweep moves on); every other action is the class's.
 */
export function decideAttempt(s: AttemptSituation): AttemptDecision {
  const row = TABLE[s.class];
  const action = s.during === 'point' ? row.point : row.setup;
  if (action === 'retry-here' && s.during === 'point' && s.pointAttempts >= s.maxPointAttempts)
    return {
      action: 'fail-point',
      quarantine: row.quarantine,
      why: `${row.why}; ${s.pointAttempts} of ${s.maxPointAttempts} attempts used`,
    };
  if (action === 'wait-operator')
    return { action, quarantine: row.quarantine, why: `${row.why}: the plan cannot run as it is` };
  return { action, quarantine: row.quarantine, why: row.why };
}

/** Strikes that quarantine a node (a node-class failure quarantines at once). */
export const STRIKES_TO_QUARANTINE = 2;

/** Is a node with these strikes (this failure's included) quarantined? */
export function quarantinedBy(step: QuarantineStep, strikes: number): boolean {
  return step === 'now' || (step === 'strike' && strikes >= STRIKES_TO_QUARANTINE);
}

/**
 * Does the topology still fit once the quarantined nodes are taken out? `undefined` when it does,
 * else the operator's message: how many nodes are left, how many the plan needs, how to clear.
 */
export function quarantineBlocks(p: {
  partitionNodes: readonly string[];
  quarantined: readonly string[];
  needed: number;
  partition: string;
}): string | undefined {
  const q = new Set(p.quarantined);
  const left = p.partitionNodes.filter((n) => !q.has(n));
  const out = p.partitionNodes.filter((n) => q.has(n));
  // no quarantined node in the partition: the quarantine takes nothing away; Slurm judges the request
  if (out.length === 0 || left.length >= p.needed) return undefined;
  return (
    `the quarantine leaves ${left.length} of ${p.partitionNodes.length} nodes of partition ${p.partition} ` +
    `(quarantined: ${out.join(', ')}); the topology needs ${p.needed}: ` +
    `clear a node with infersweep nodes --clear NODE, then infersweep resume`
  );
}
