/**
 * A node made faulty on the real stack (this slot's own Slurm): the sweep's allocation ends
 * NODE_FAIL, the attempt is classified node health, the node is quarantined in the worker's data
 * folder, the point is re-placed on an allocation that excludes it (`salloc --exclude`), the sweep
 * completes on the other nodes; `infersweep nodes` lists and clears the quarantine; the GPU-hour
 * ledger of the sweep (one failed attempt) sums to Slurm's own held time × GPUs within 1 %.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@temporalio/client';
import { LocalExecutor } from '@infersweep/slurm';
import { openQuarantine } from '@infersweep/orchestrator';
import { ledgerTotal, LEDGER_CATEGORIES, type SweepResult } from '@infersweep/sweep';
import {
  cleanupStarted,
  client as connect,
  localSlurm,
  notSaturationGated,
  partitionUp,
  startOnNewWorker,
  testInput,
  testPlan,
  waitProgress,
} from '@infersweep/testkit/sweep-harness';
import { cli } from '@infersweep/testkit/cli';
import { until } from '@infersweep/testkit/wait';

const slurm = localSlurm(); // sets SLURM_CONF to this slot's Slurm: nothing here reaches another slot
const exec = new LocalExecutor();
const quarantine = openQuarantine('local'); // the worker's: this slot's data folder
let c: Client;
let downed: string | undefined;

/** Slurm's own start and end of a job (scontrol keeps them for MinJobAge), seconds held. */
async function slurmHeldSeconds(jobId: string): Promise<number> {
  const r = await exec.run(['scontrol', 'show', 'job', '-o', jobId]);
  const field = (k: string) => new RegExp(`\\b${k}=(\\S+)`).exec(r.stdout)?.[1];
  const s = (Date.parse(`${field('EndTime')}Z`) - Date.parse(`${field('StartTime')}Z`)) / 1000;
  if (!Number.isFinite(s)) throw new Error(`no StartTime/EndTime for job ${jobId}: ${r.stdout}`);
  return s;
}

beforeAll(async () => {
  await until('every node of the partition up', () => partitionUp(), 180_000);
  c = await connect();
  await quarantine.clear('all');
});
afterAll(async () => {
  if (downed) await exec.run(['scontrol', 'update', `nodename=${downed}`, 'state=resume']);
  await quarantine.clear('all');
  await quarantine.close();
  await cleanupStarted(slurm);
  await c?.connection.close();
});

describe('a faulty node: classified, quarantined, the sweep completes elsewhere, every GPU-second accounted for', () => {
  it('NODE_FAIL mid-point → node-health, the node excluded from the next allocation, nodes lists and clears it, the ledger sums to Slurm time × GPUs', async () => {
    const input = testInput(testPlan('latency', [1], notSaturationGated), 'fleet-node-fail');
    const gpus = input.plan.slurm.nodes * input.plan.slurm.gpusPerNode;
    const { worker, h } = await startOnNewWorker(c, input);
    const result = (await worker.runUntil(async () => {
      const p = await waitProgress(
        h,
        (q) => q.phase === 'running-point' && q.currentPoint === 1 && (q.allocation?.nodes.length ?? 0) === 2,
        240_000,
        'point c=1 running',
      );
      // the allocation's second node fails (scontrol down: slurmctld ends the job NODE_FAIL)
      downed = p.allocation!.nodes[1]!;
      const r = await exec.run([
        'scontrol',
        'update',
        `nodename=${downed}`,
        'state=down',
        'reason=infersweep-fleet-test',
      ]);
      expect(r.code).toBe(0);
      return h.result();
    })) as SweepResult;

    expect(result.status).toBe('completed');
    // the point was re-placed, never failed: measured on its first counted attempt
    expect(
      result.points.map((p) => [p.concurrency, p.status === 'done' || p.status === 'invalid', p.attempts]),
    ).toEqual([[1, true, 1]]);
    const [lost, replaced] = result.allocations;
    expect(result.allocations).toHaveLength(2);
    expect(lost).toMatchObject({ ended: 'NODE_FAIL', failureClass: 'node-health', gpus });
    expect(lost!.nodes).toContain(downed);
    expect(replaced!.nodes).not.toContain(downed);
    expect(replaced!.excluded).toEqual([downed]);
    expect(result.points[0]!.failures).toEqual([
      expect.objectContaining({
        class: 'node-health',
        // NODE_FAIL, or COMPLETING (NodeDown) when the watch sees the job before its steps are cleaned up
        rule: expect.stringMatching(/^slurm-(node-fail|reason-node-down)$/),
        action: 're-place',
        quarantined: [downed],
        jobId: lost!.jobId,
      }),
    ]);

    // `infersweep nodes` lists the quarantine (the worker's data folder) and clears it
    const listed = await cli(['nodes', '--cluster', 'local']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(
      new RegExp(
        `^${downed} +until \\S+ +node-health +slurm-(node-fail|reason-node-down) \\(sweep ${input.sweepId}, job ${lost!.jobId}, 1 strike\\(s\\)\\)`,
        'm',
      ),
    );
    const cleared = await cli(['nodes', '--cluster', 'local', '--clear', downed!, '--json']);
    expect(cleared.code).toBe(0);
    expect(JSON.parse(cleared.stdout)).toMatchObject({ cluster: 'local', nodes: [], cleared: [downed] });
    expect(await quarantine.list()).toEqual([]);

    // the ledger: every category booked, summing to Slurm's own held time × GPUs (1 %)
    const l = result.ledger!;
    let slurmGpuSeconds = 0;
    for (const a of result.allocations) slurmGpuSeconds += (await slurmHeldSeconds(a.jobId!)) * gpus;
    console.log(
      `[measure] fleet: ledger ${l.heldGpuSeconds.toFixed(0)} GPU-s held (${LEDGER_CATEGORIES.map((k) => `${k} ${l.sweep[k].toFixed(0)}`).join(', ')}) vs Slurm ${slurmGpuSeconds.toFixed(0)} GPU-s`,
    );
    expect(Math.abs(ledgerTotal(l.sweep) - slurmGpuSeconds)).toBeLessThanOrEqual(0.01 * slurmGpuSeconds);
    expect(Math.abs(l.heldGpuSeconds - slurmGpuSeconds)).toBeLessThanOrEqual(0.01 * slurmGpuSeconds);
    expect(l.sweep.failedAttempts).toBeGreaterThan(0);
    expect(l.sweep.measurement).toBeGreaterThan(0);
    expect(l.sweep.modelLoad).toBeGreaterThan(0);
    expect(l.points['1']!.failedAttempts).toBeGreaterThan(0);
    expect(l.open).toEqual({});

    // the node comes back for the other tests of this slot
    const node = downed!;
    await exec.run(['scontrol', 'update', `nodename=${node}`, 'state=resume']);
    downed = undefined;
    await until(`${node} back up`, () => partitionUp(node));
  }, 600_000);
});
