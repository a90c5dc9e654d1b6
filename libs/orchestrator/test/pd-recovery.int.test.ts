/**
 * A lost decode node recovers like any loss (libs/orchestrator/test/sweep-recovery.int.test.ts, a node set down mid-point, for P/D): the
 * shipped `pd-1p1d` orientation on the local profile, each role on one node (TP8, so the sweep fits twice in
 * the stack's four nodes), llm-d's pd-sidecar in front of the decode simulator. The decode worker's node is
 * set down while point c=2 runs: the allocation ends NODE_FAIL, the sweep allocates again, relaunches both
 * roles and the sidecar, and measures c=2 again with both roles serving every measured request.
 */
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import type { SweepResult } from '@infersweep/sweep';
import { stackEnv } from '@infersweep/testkit/stack';
import {
  keepHistory,
  liveJobsOf,
  localSlurm,
  notSaturationGated,
  pointRunning,
  readPoint,
  realStackSuite,
  startOnNewWorker,
  testInput,
  testPlan,
  waitProgress,
} from '@infersweep/testkit/sweep-harness';

const slurm = localSlurm();
const suite = realStackSuite(slurm);
const scontrol = (...args: string[]) =>
  execFileSync('scontrol', args, { env: { ...process.env, SLURM_CONF: stackEnv().SLURM_CONF } });

describe('P/D sweep recovery on the real stack', () => {
  it('the decode node set down mid-point: re-allocation, both roles and the sidecar relaunched, the point rerun', async () => {
    const plan = testPlan('pd-1p1d', [2], notSaturationGated, (c) => {
      const pd = c.orientations['pd-1p1d']!.disaggregated!;
      pd.prefill.topology = { ...pd.prefill.topology, pp: 1 };
      pd.decode.topology = { ...pd.decode.topology, pp: 1 };
    });
    const pd = plan.disaggregation!;
    expect(pd.router.kind).toBe('llm-d-pd-sidecar');
    expect(pd.roles.map((r) => [r.role, r.workerNodes])).toEqual([
      ['prefill', [[0]]],
      ['decode', [[1]]],
    ]);
    const input = testInput(plan, 'pd-decode-down');
    const { worker, h } = await startOnNewWorker(suite.client(), input);
    let downed: string | undefined;
    try {
      const result = (await worker.runUntil(async () => {
        const during = await waitProgress(h, pointRunning(2), 120_000, 'point c=2 running');
        downed = during.allocation!.nodes[pd.router.node]!;
        scontrol('update', `nodename=${downed}`, 'state=down', 'reason=infersweep-test');
        return h.result();
      })) as SweepResult;
      expect(result.status).toBe('completed');
      expect(result.allocations.map((a) => a.ended)).toEqual(['NODE_FAIL', 'released']);
      const last = result.allocations.at(-1)!;
      expect(last.nodes).not.toContain(downed);
      const r = readPoint(input.resultsDir, 2);
      expect(r.submission_invalid_reasons).toEqual([]);
      expect(r.identity.jobId).toBe(last.jobId);
      expect(r.role_checks!.map((c) => [c.role, c.ok])).toEqual([
        ['prefill', true],
        ['decode', true],
      ]);
      expect(r.role_checks!.every((c) => c.served! > 0)).toBe(true);
      expect(
        await liveJobsOf(
          slurm,
          result.allocations.map((a) => a.jobName),
        ),
      ).toEqual([]);
      await keepHistory(h, 'pd-decode-node-down');
    } finally {
      if (downed) scontrol('update', `nodename=${downed}`, 'state=resume');
    }
  }, 240_000);
});
