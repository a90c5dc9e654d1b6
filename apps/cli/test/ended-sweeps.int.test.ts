/**
 * Every end says why, on the real stack with the CLI as a subprocess:
 *  - a sweep the worker refuses at prepareSweep (a secret its settings do not allow): `sweep`,
 *    `status` and `resume` print the refusal itself (field, value, setting) and where it happened,
 *    not "Activity task failed", and exit as the README says (3: the sweep ended failed); with no
 *    worker, `status` shows the state it ended in (the snapshot `sweep` saved when it ended);
 *  - an ended search sweep with no worker running: `status --json`, `status`, `results --json` and
 *    `report` show its SLO limit and bracket and its verdict, read from the workflow's result.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { progressQuery, type SweepProgress } from '@infersweep/sweep';
import { taskQueueFor } from '@infersweep/core';
import { cli, testCluster } from '@infersweep/testkit/cli';
import {
  cleanupStarted,
  client as temporalClient,
  localSlurm,
  notSaturationGated,
  runningWorker,
  start,
  testInput,
  testPlan,
} from '@infersweep/testkit/sweep-harness';
import { repoRoot } from '@infersweep/testkit/stack';

const slurm = localSlurm();
let client: Client;
beforeAll(async () => {
  client = await temporalClient();
});
afterAll(async () => {
  await cleanupStarted(slurm);
  await client?.connection.close();
});

describe('a sweep the worker refuses says why', () => {
  const secret = 'INFERSWEEP_TEST_REFUSED_SECRET';
  const dir = mkdtempSync(join(tmpdir(), 'infersweep-refused-'));
  const config = join(dir, 'refused.yaml');
  writeFileSync(
    config,
    readFileSync(join(repoRoot, 'configs/kimik3-fp4-h200.yaml'), 'utf8').replace(
      /^engine:\n/m,
      `engine:\n  secretEnv: [${secret}]\n`,
    ),
  );
  const label = `refused-${randomUUID().slice(0, 8)}`;
  let sweepId = '';
  /** the refusal as `status` prints it: field, value and the worker setting that would allow it */
  const refusal = new RegExp(`^  failure {6}.*secretEnv.*"${secret}".*INFERSWEEP_WORKER_SECRETS`, 'm');

  it('sweep prints the refusal with field, value and setting and exits 3', async () => {
    const r = await cli(
      [
        'sweep',
        '--config',
        config,
        '--orientation',
        'latency',
        '--points',
        '1',
        '--cluster',
        'local',
        '--label',
        label,
      ],
      {},
      180_000,
    );
    sweepId = /^sweep\s+(\S+)/m.exec(r.stdout)?.[1] ?? '';
    expect(sweepId, r.stdout + r.stderr).toContain(label);
    expect(r.stdout).toMatch(refusal);
    expect(r.stdout).toMatch(/^ {2}failed in {4}activity prepareSweep \(RefusedInputError\)$/m);
    expect(r.stdout).not.toContain('Activity task failed');
    expect(r.code, r.stdout + r.stderr).toBe(3);
  }, 200_000);

  it('status and status --json with no worker running say the same, with the state it ended in', async () => {
    expect(sweepId).not.toBe('');
    const text = await cli(['status', sweepId]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(refusal);
    expect(text.stdout).not.toContain('progress     unavailable');
    const j = await cli(['status', sweepId, '--json']);
    const s = JSON.parse(j.stdout) as SweepProgress & {
      workflowStatus: string;
      failure: string;
      failureDetail: { type: string };
      progressFrom: string;
    };
    expect(s.workflowStatus).toBe('FAILED');
    expect(s.failure).toContain(`"${secret}"`);
    expect(s.failure).toContain('INFERSWEEP_WORKER_SECRETS');
    expect(s.failureDetail.type).toBe('RefusedInputError');
    // the final state `sweep` saved in the results folder while its worker answered: refused before any point or allocation
    expect(s.progressFrom).toBe(join(s.resultsDir, 'progress.json'));
    expect(s.phase).toBe('failed');
    expect(s.points.map((p) => [p.concurrency, p.status])).toEqual([[1, 'pending']]);
    expect(s.allocations).toEqual([]);
    expect(s.message).toContain(`"${secret}"`);
  });

  it('resume says why the sweep had ended, and why the new run ends too (exit 3)', async () => {
    const r = await cli(['resume', sweepId], {}, 180_000);
    expect(r.stdout).toMatch(new RegExp(`had ended FAILED: .*"${secret}".*INFERSWEEP_WORKER_SECRETS`));
    expect(r.stdout).toMatch(refusal);
    expect(r.code, r.stdout + r.stderr).toBe(3);
  }, 200_000);
});

describe('an ended search sweep shows everything it knew with no worker running', () => {
  // c=1 then c=2 both meet the SLO: the limit is at maxConcurrency, found in two short points
  const plan = testPlan('balanced', [1], notSaturationGated, (cfg) => {
    const o = cfg.orientations.balanced!;
    o.concurrency = [1];
    o.search = {
      goal: ['slo-limit'],
      slo: { maxErrorRate: 0.05 },
      minConcurrency: 1,
      maxConcurrency: 2,
      maxPoints: 2,
      resolution: { absolute: 1 },
    };
  });
  const cluster = testCluster();
  const input = testInput({ ...plan, cluster }, 'ended-search');
  let final: SweepProgress;

  beforeAll(async () => {
    const before = process.env.INFERSWEEP_WORKER_CLUSTERS;
    process.env.INFERSWEEP_WORKER_CLUSTERS = `local,${cluster}=local`;
    const worker = await runningWorker(taskQueueFor(cluster)).finally(() => {
      if (before === undefined) delete process.env.INFERSWEEP_WORKER_CLUSTERS;
      else process.env.INFERSWEEP_WORKER_CLUSTERS = before;
    });
    try {
      const h = await start(client, input, taskQueueFor(cluster));
      await h.result();
      final = await h.query(progressQuery);
    } finally {
      await worker.stop(); // from here on no worker polls the sweep's queue
    }
  }, 600_000);

  it('the sweep found its limit (what the views below must show)', () => {
    expect(final.phase).toBe('completed');
    expect(final.search?.limit).toMatchObject({ concurrency: 2, below: 2, status: 'at-max' });
    expect(final.message).toMatch(/^regressions: /);
  });

  it('status --json and status show the SLO limit, its bracket and the verdict', async () => {
    const j = await cli(['status', input.sweepId, '--json']);
    expect(j.code, j.stderr).toBe(0);
    const s = JSON.parse(j.stdout) as SweepProgress & { workflowStatus: string };
    expect(s.workflowStatus).toBe('COMPLETED');
    expect(s.search).toEqual(final.search);
    expect(s.points.map((p) => [p.concurrency, p.status, p.origin])).toEqual(
      final.points.map((p) => [p.concurrency, p.status, p.origin]),
    );
    expect(s.message).toBe(final.message);
    const t = await cli(['status', input.sweepId]);
    expect(t.stdout).toContain(`SLO limit ${final.search!.limit!.text}`);
    expect(t.stdout).toContain(final.message!);
  });

  it('results --json and the report show the SLO limit', async () => {
    const res = await cli(['results', input.sweepId, '--json']);
    expect(res.code, res.stderr).toBe(0);
    const [sweep] = JSON.parse(res.stdout) as { search: { limit?: unknown } | null }[];
    expect(sweep!.search?.limit).toEqual(final.search!.limit);
    const r = await cli(['report', input.sweepId]);
    expect(r.code, r.stderr).toBe(0);
    const path = /report: (.+\.html)/.exec(r.stdout)?.[1];
    expect(path, r.stdout).toBeDefined();
    const html = readFileSync(path!, 'utf8');
    expect(html).toContain('<g class="mark slo-limit" data-concurrency="2">');
    expect(html).toContain(final.search!.limit!.text);
  });
});
