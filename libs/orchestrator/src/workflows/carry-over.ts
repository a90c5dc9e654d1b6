/** What a sweep run starts from: its input, and what the run before it carried over when it continued as new. */
import type { SweepInput, SweepProgress } from '@infersweep/sweep';
import type { LeaseSnapshot } from './lease';

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
