/**
 * The worker's node quarantine as activities: a failed attempt's suspects recorded (../quarantine.ts
 * holds the store and its rules), and the nodes the next allocation must exclude, with the check that
 * the topology still fits the nodes left.
 */
import { InfersweepError, type AttemptClass } from '@infersweep/core';
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
      const nodes = await suspects(slurm, plan, input.nodes, input.class);
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

/** Slurm's compact states of a node it does not trust (sinfo %t: `down*`, `drain`, `fail`, `boot`, a `*` not responding). */
const UNHEALTHY = /^(down|drain|drng|fail|failg|boot|maint|inval|npc|unk)|\*$/;

/**
 * Which of a failure's nodes are the suspects: of an allocation's nodes, a node failure names the
 * ones Slurm itself holds unhealthy (DOWN, DRAINED, not responding); when Slurm names none (it
 * recovered, or a log line named the node), every node the failure named.
 */
async function suspects(slurm: SlurmCluster, plan: SweepPlan, nodes: string[], cls: AttemptClass): Promise<string[]> {
  if (cls !== 'node-health' || nodes.length < 2) return nodes;
  const states = await slurm.nodeStates(plan.slurm.partition).catch(() => []);
  const bad = nodes.filter((n) => states.some((s) => s.node === n && UNHEALTHY.test(s.state)));
  return bad.length > 0 ? bad : nodes;
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
