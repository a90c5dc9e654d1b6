/**
 * The replicate rounds of a sweep (the config's `replicates:` block): after the first pass, which
 * replicate runs next, whether the allocation held must be given back first (the point already ran
 * on it), and which nodes the next allocation avoids. libs/sweep/src/replicates.ts decides; this is
 * the sweep's handle on it. A sweep without the block never gets a replicate: every method is a
 * no-op, so its history is what it was.
 */
import {
  needsFreshAllocation,
  nextReplicate,
  settleReplicate,
  startReplicates,
  type PointState,
  type SweepProgress,
  type SweepReplicates,
} from '@infersweep/sweep';

export class ReplicateRounds {
  constructor(
    private readonly state: SweepProgress,
    private readonly spec: SweepReplicates | undefined,
  ) {}

  /** The next replicate to run, once the first pass has settled; the ones that ran are settled first. */
  next(): PointState | undefined {
    if (!this.spec) return undefined;
    const r = startReplicates(this.state, this.spec);
    for (const rp of r.points) settleReplicate(rp, this.spec);
    return nextReplicate(r)?.state;
  }

  /** Replicates are still to run (or to be chosen): an operator wait is not over. */
  pending(): boolean {
    if (!this.spec) return false;
    return !this.state.replicates || this.state.replicates.points.some((rp) => rp.status === 'replicating');
  }

  /** The replicate number of a replicate's point state; undefined for a first-pass point. */
  replicateOf(pt: PointState): number | undefined {
    const rp = this.state.replicates?.points.find((x) => x.current === pt);
    return rp ? rp.replicates.length + 1 : undefined;
  }

  /** Why the allocation held must be given back before this replicate (it already ran the point); undefined: keep it. */
  freshAllocationReason(pt: PointState, jobId: string | undefined): string | undefined {
    const rp = this.state.replicates?.points.find((x) => x.current === pt);
    if (!rp || !needsFreshAllocation(rp, jobId)) return undefined;
    return `replicates: replicate ${rp.replicates.length + 1} of c=${rp.concurrency} needs an allocation it has not run on`;
  }

  /** The nodes the next allocation avoids: the last allocation's, once replicating on independent allocations. */
  avoidNodes(): string[] | undefined {
    if (!this.spec?.independentAllocations || !this.state.replicates) return undefined;
    const last = [...this.state.allocations].reverse().find((a) => a.nodes.length > 0);
    return last ? [...last.nodes] : undefined;
  }
}
