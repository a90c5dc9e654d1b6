/** What a sweep run starts from: its input, and what the run before it carried over when it continued as new. */
import type { SweepInput, SweepProgress } from '@infersweep/sweep';
import type { Allocation, Deployment } from '../activities/types';

/** What a sweep holds on the cluster (./lease.ts): one object, so continue-as-new carries exactly what it held. */
export interface LeaseSnapshot {
  allocation?: Allocation;
  deployment?: Deployment;
  /** servers launched so far in this sweep (names each server's log folder) */
  serverIndex: number;
  /** the server has run a point since it became ready (the next point drains it first) */
  serverUsed: boolean;
  pointsOnAllocation: number;
  /** The job the image was last imported on (imageImport.on = head-node; a repeat is a cached check). */
  importedOnJob?: string;
}

/** What a sweep hands to its next run when it continues as new (history kept bounded). */
export interface SweepCarryOver {
  progress: SweepProgress;
  /** what the sweep holds: allocation, server, image import (./lease.ts) */
  lease: LeaseSnapshot;
  allocationBudgetBase: number;
  /** runs before this one (continue-as-new count) */
  runs: number;
}

export interface SweepRunInput extends SweepInput {
  /** continue-as-new past this many history events (default 10 000; tests use a small one) */
  historyEventLimit?: number;
  /** set by continue-as-new only */
  carried?: SweepCarryOver;
}
