/**
 * `agentx.aiperf.runOn: head-node` on the real stack (Temporal dev server, local Slurm over the loopback sshd,
 * the simulator launched through srun): the pinned aiperf (PyPI flavour, the configured synthetic traces)
 * runs as an `srun --overlap` step on the allocation's head node (a host step: the local slurmd's run on this
 * host, the plan has no container), writes its log and artifacts under the cluster's shared dir
 * (remoteAiperfPointDir), and the point activity copies them back into the results layout and parses them.
 */
import { describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SweepResult } from '@infersweep/sweep';
import { readRequestRecords } from '@infersweep/agentx';
import { ResultsLayout, remoteAiperfPointDir } from '@infersweep/core';
import { toolsDir } from '@infersweep/testkit/stack';
import { findStep } from '@infersweep/slurm';
import { headNodeAiperfRunner } from '../src/activities/aiperf-step';
import {
  localSlurm,
  notSaturationGated,
  readPoint,
  realStackSuite,
  startOnNewWorker,
  testInput,
  testPlan,
} from '@infersweep/testkit/sweep-harness';

const slurm = localSlurm();
const suite = realStackSuite(slurm);

const aiperfBinary = join(toolsDir, 'aiperf-venv', 'bin', 'aiperf');
const aiperfTokenizer = process.env.INFERSWEEP_AIPERF_TOKENIZER ?? join(toolsDir, 'tokenizer');

describe('aiperf on the head node', () => {
  it('a sweep point measured by aiperf in an srun step on the head node, its artifacts in the results dir', async () => {
    if (!existsSync(aiperfBinary)) throw new Error(`aiperf not installed at ${aiperfBinary} (npm run setup)`);
    const plan = testPlan('latency', [2], (p) => {
      notSaturationGated(p);
      p.agentx.client = 'aiperf';
      p.agentx.aiperf = {
        ...p.agentx.aiperf,
        runOn: 'head-node',
        binary: aiperfBinary,
        flavor: 'pypi',
        tokenizer: aiperfTokenizer,
        traces: 'configured',
      };
      // aiperf starts its services and configures the dataset before the profile: give its warmup room
      p.agentx.warmupGracePeriodSeconds = 60;
      p.engine.maxModelLen = 8192;
    });
    expect(plan.slurm.containerRuntime).toBe('host');
    const input = testInput(plan, 'aiperf-head');
    const t0 = Date.now();
    const { worker, h } = await startOnNewWorker(suite.client(), input);
    const result = (await worker.runUntil(h.result())) as SweepResult;
    const seconds = (Date.now() - t0) / 1000;
    expect(result.points.map((p) => p.concurrency)).toEqual([2]);

    const record = readPoint(input.resultsDir, 2);
    expect(record.client.name).toBe('aiperf');
    expect(record.num_requests_successful).toBeGreaterThan(0);
    const lines = readRequestRecords(record.artifacts.requests_jsonl!);
    expect(lines.filter((l) => l.phase === 'profiling' && l.ok).length).toBe(record.num_requests_successful);

    // the argv ran on the cluster side: artifacts and traces under the shared dir, the served context passed
    const remote = remoteAiperfPointDir(plan.sharedDir, input.sweepId, 2);
    const pointDir = new ResultsLayout(input.resultsDir).pointDir(2);
    const command = readFileSync(join(pointDir, 'benchmark_command.txt'), 'utf8');
    expect(command).toContain(`--output-artifact-dir ${remote}/aiperf_artifacts`);
    expect(command).toContain(`--input-file ${remote}/traces`);
    expect(command).toContain('--max-context-length 8192');
    expect(readdirSync(join(remote, 'traces')).length).toBe(readdirSync(join(pointDir, 'traces')).length);

    // the step's log and exports, copied back into the results layout, byte for byte
    const log = readFileSync(join(pointDir, 'benchmark.log'), 'utf8');
    expect(log).toContain('infersweep-aiperf-exit=0');
    expect(log).toBe(readFileSync(join(remote, 'benchmark.log'), 'utf8'));
    for (const f of ['profile_export_aiperf.json', 'profile_export.jsonl'])
      expect(readFileSync(join(pointDir, 'aiperf_artifacts', f), 'utf8')).toBe(
        readFileSync(join(remote, 'aiperf_artifacts', f), 'utf8'),
      );
    expect(record.artifacts.raw_dir).toBe(join(pointDir, 'aiperf_artifacts'));
    console.log(`[measure] aiperf on the head node: sweep of one point in ${seconds.toFixed(1)} s`);
  }, 240_000);

  it('an abort stops the head-node step (scancel) and the runner reports it aborted', async () => {
    const plan = testPlan('latency', [1]);
    const job = await slurm.allocate({
      jobName: `infersweep-test-aiperf-abort-${randomUUID().slice(0, 8)}`,
      nodes: 1,
      gres: false,
      exclusive: false,
      timeLimitMinutes: 5,
      grantTimeoutSeconds: 120,
    });
    try {
      const sweepId = `abort-${randomUUID().slice(0, 8)}`;
      const runner = headNodeAiperfRunner({ slurm, plan, deployment: job, sweepId, concurrency: 1, pollMs: 250 });
      const local = mkdtempSync(join(tmpdir(), 'aiperf-abort-'));
      const abort = new AbortController();
      const stepName = 'infersweep-aiperf-c1';
      const listed = async () => (await findStep(slurm, { jobId: job.jobId, node: job.headNode, stepName })) !== null;
      const t0 = Date.now();
      // a stand-in for aiperf that never ends by itself: only the abort can end this run
      const run = runner.run({
        binary: 'sleep',
        argv: ['600'],
        env: {},
        logFile: join(local, 'benchmark.log'),
        artifactDir: join(local, 'aiperf_artifacts'),
        hardTimeoutMs: 600_000,
        signal: abort.signal,
      });
      while (!(await listed())) {
        if (Date.now() - t0 > 60_000) throw new Error('the aiperf step never appeared in squeue');
        await new Promise((r) => setTimeout(r, 200));
      }
      abort.abort();
      const out = await run;
      expect(out.aborted).toBe(true);
      // scancel kills the step's processes one by one: the wrapper is killed before it prints an exit code, or it
      // sees its child die of the signal and prints 128 + 9 (SIGKILL) or 128 + 15 (SIGTERM) first (1 run in 6 here
      // beside four busy loops printed 137; never 0, never the child's own end: `sleep 600` cannot end by itself)
      expect([null, 137, 143]).toContain(out.exitCode);
      expect(await listed()).toBe(false);
      expect((Date.now() - t0) / 1000).toBeLessThan(60);
    } finally {
      await slurm.release(job.jobId);
    }
  }, 120_000);
});
