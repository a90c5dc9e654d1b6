/**
 * The worker's node quarantine as activities: a failed attempt's suspects recorded (../quarantine.ts
 * holds the store and its rules), and the nodes the next allocation must exclude, with the check that
 * the topology still fits the nodes left.
 */
import { InfersweepError, suspectNodes, type AttemptClass } from '@infersweep/core';
import type { SlurmCluster } from '@infersweep/slurm';
import { quarantineBlocks } from '@infersweep/sweep';
import type { SweepPlan } from '@infersweep/topology';
import { openQuarantine } from '../quarantine';
import type { ActivityContext } from './context';
import { progress } from './liveness';
import type { QuarantineActivities } from './types';

/**
 * The quarantine leaves fewer nodes than the topology needs: not retried, and not the sweep's input
 * being wrong; the workflow waits for an operator (`quarantineBlocks` in the failure's details).
 */
export class QuarantineBlocksError extends InfersweepError {
  constructor(message: string, context: { step: string; node: string }) {
    super(message, { kind: 'fatal', context: { ...context, quarantineBlocks: true } });
  }
}

export function quarantineActivities(ctx: ActivityContext): QuarantineActivities {
  return {
    async implicateNodes(input) {
      ctx.assertOwnSweep(input.sweepId);
      const { plan, slurm } = await ctx.open(input);
      const { step, sweepId, jobId, rule, evidence } = input;
      const nodes = await suspects(slurm, plan, input.nodes, input.class, input.allocationNodes ?? []);
      progress({ phase: 'quarantine', nodes, step });
      const store = openQuarantine(plan.cluster);
      try {
        const quarantined = await store.implicate({
          nodes,
          step,
          class: input.class,
          rule,
          sweepId,
          ...(jobId ? { jobId } : {}),
          ...(evidence ? { evidence } : {}),
        });
        return { quarantined };
      } finally {
        await store.close();
      }
    },
  };
}

/** The suspects of a failure ({@link suspectNodes}); Slurm's node states are read only for a node failure. */
async function suspects(
  slurm: SlurmCluster,
  plan: SweepPlan,
  nodes: string[],
  cls: AttemptClass,
  allocationNodes: string[],
): Promise<string[]> {
  if (cls !== 'node-health') return nodes;
  const states = await slurm.nodeStates(plan.slurm.partition).catch(() => []);
  return suspectNodes(nodes, allocationNodes, cls, states);
}

/**
 * The quarantined nodes of the plan's partition, for `salloc --exclude`; a QuarantineBlocksError when
 * the nodes left cannot hold the topology.
 */
export async function excludedNodes(slurm: SlurmCluster, plan: SweepPlan): Promise<string[]> {
  const store = openQuarantine(plan.cluster);
  const quarantined = (await store.list().finally(() => store.close())).map((e) => e.node);
  if (quarantined.length === 0) return [];
  const partitionNodes = await slurm.partitionNodes(plan.slurm.partition);
  const blocked = quarantineBlocks({
    partitionNodes,
    quarantined,
    needed: plan.slurm.nodes,
    partition: plan.slurm.partition ?? '(default)',
  });
  if (blocked) throw new QuarantineBlocksError(blocked, { step: 'allocate', node: quarantined.join(',') });
  return partitionNodes.filter((n) => quarantined.includes(n));
}
