/**
 * Lease: what a sweep holds on the cluster between points, an allocation and the server on it, as
 * one object. Continue-as-new carries its snapshot and the next run restores it, so a continued run
 * holds exactly what the last one held: the same job, the same ready server, the image already
 * imported on that job. Workflow code: plain data, no activity calls.
 */
import type { Allocation, Deployment } from '../activities/types';

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

export class Lease {
  allocation?: Allocation;
  deployment?: Deployment;
  serverIndex = 0;
  serverUsed = false;
  pointsOnAllocation = 0;
  importedOnJob?: string;

  constructor(from?: LeaseSnapshot) {
    if (from) this.restore(from);
  }

  restore(s: LeaseSnapshot): void {
    this.allocation = s.allocation;
    this.deployment = s.deployment;
    this.serverIndex = s.serverIndex;
    this.serverUsed = s.serverUsed;
    this.pointsOnAllocation = s.pointsOnAllocation;
    this.importedOnJob = s.importedOnJob;
  }

  snapshot(): LeaseSnapshot {
    const { allocation, deployment, serverIndex, serverUsed, pointsOnAllocation, importedOnJob } = this;
    return { allocation, deployment, serverIndex, serverUsed, pointsOnAllocation, importedOnJob };
  }

  /** A new allocation: no points on it yet. */
  granted(a: Allocation): void {
    this.allocation = a;
    this.pointsOnAllocation = 0;
  }

  /** Does the image still need importing on this job? */
  needsImport(jobId: string): boolean {
    return this.importedOnJob !== jobId;
  }

  /** The next server's index (counted before it launches, so a retried launch reuses none). */
  nextServer(): number {
    this.serverIndex += 1;
    return this.serverIndex;
  }

  ready(dep: Deployment): void {
    this.deployment = dep;
    this.serverUsed = false;
  }

  pointDone(): void {
    this.serverUsed = true;
    this.pointsOnAllocation += 1;
  }

  /** Forget the server (it is being stopped); its deployment, if any, for the caller to stop. */
  dropServer(): Deployment | undefined {
    const dep = this.deployment;
    this.deployment = undefined;
    this.serverUsed = false;
    return dep;
  }
}
