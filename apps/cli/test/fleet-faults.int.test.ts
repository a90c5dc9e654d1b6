/**
 * Nodes made faulty for real on this slot's stack, each seen through the whole path (Slurm, the
 * server's log, the activity interceptor's classifier, the workflow's decision, the quarantine):
 *  - a node whose slurmd stops: Slurm marks it DOWN (not responding) after SlurmdTimeout and ends
 *    the job NODE_FAIL; node health, quarantined at once, the point re-placed on the other nodes;
 *  - a server that dies with PyTorch's CUDA OOM line: cuda-oom, the point failed at once, the sweep
 *    goes on on the same allocation;
 *  - a server that dies with an NCCL error line on a node that stays bad: nccl, a strike per death,
 *    the second quarantines the node, the point re-placed on the other nodes;
 *  - a server that answers every request 200 with no generated token: the point invalid
 *    (zero_output_tokens), zero-output, failed at once, the class in the status and the history;
 *  - an engine the nodes do not have (not on their PATH): setup, the sweep waits for an operator naming
 *    the program, no node suspected; an abort ends it with nothing held.
 * The server faults come from scripts/stack.sh's faulty-sim (the simulator behind a watcher of a
 * per-node fault file), which the plan launches in place of the simulator; the lines are the ones
 * the rules of libs/core/src/attempt-class.ts were built from.
 *
 * The zero-token answers are the simulator's own: with its KV cache on (the plan's prefix caching
 * gives `--enable-kvcache`) and `--global-cache-hit-threshold 1`, llm-d-inference-sim answers every
 * request whose prompt is not wholly cached 200 with finish_reason `cache_threshold`, no content and
 * usage.completion_tokens 0, streamed or not (llm-d/llm-d-inference-sim v0.10.2:
 * pkg/llm-d-inference-sim/request.go shouldReturnCacheThresholdFinishReason and the usage it builds,
 * pkg/communication/http.go emitResponseChunks; docs/kv-cache.md "returns an empty response
 * immediately with finish reason cache_threshold"). Started that way the server would never pass
 * readiness, whose probe must generate a token (libs/agentx/src/server/readiness.ts probeCompletion):
 * faulty-sim restarts it with the flag once c=1 is measured, inside c=2's drain gate (which a failed
 * scrape restarts), so c=2 is measured on a ready server that generates nothing.
 */
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@temporalio/client';
import { LocalExecutor } from '@infersweep/slurm';
import { openQuarantine } from '@infersweep/orchestrator';
import { openStore } from '@infersweep/history';
import { abortUpdate, progressQuery, type SweepProgress, type SweepResult } from '@infersweep/sweep';
import type { SweepConfig, SweepPlan } from '@infersweep/topology';
import {
  allowingNodeBinaries,
  cleanupStarted,
  client as connect,
  expectNoLeak,
  localSlurm,
  notSaturationGated,
  partitionUp,
  pointRunning,
  readPoint,
  startOnNewWorker,
  testInput,
  testPlan,
  waitProgress,
} from '@infersweep/testkit/sweep-harness';
import { stackEnv } from '@infersweep/testkit/stack';
import { until } from '@infersweep/testkit/wait';
import { pointLine } from '../src/ops/render';

const slurm = localSlurm(); // sets SLURM_CONF to this slot's Slurm: nothing here reaches another slot
const exec = new LocalExecutor();
const quarantine = openQuarantine('local'); // the worker's: this slot's data folder
const stack = stackEnv().INFERSWEEP_STACK;
const faultsDir = join(stack, 'faults');
const faultySim = join(stack, 'bin', 'faulty-sim');
let c: Client;
/** a node whose slurmd this file stopped and has not restarted yet */
let stopped: string | undefined;
const faultFiles = new Set<string>();

/**
 * These sweeps are about faults, not speed: their points go to a history store of their own, with no
 * confirmation, so they neither feed nor are judged against the series the lane's other sweeps share
 * (the workers of this process read INFERSWEEP_HISTORY_SETTINGS at each sweep's end).
 */
const historySettings = join(stack, 'fleet-faults-history.json');
const historyStore = join(stack, '..', 'test-results', 'history-fleet-faults');
const historyBefore = process.env.INFERSWEEP_HISTORY_SETTINGS;

/** PyTorch's OOM (c10/cuda/CUDACachingAllocator.cpp, the cuda-oom rule's source), as vLLM's engine core logs it. */
const CUDA_OOM_LINE =
  'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.22 GiB. GPU 0 has a total capacity of 79.11 GiB of which 512.00 MiB is free.';
/** PyTorch's NCCL error (NCCLUtils.hpp) with NCCL's ncclRemoteError string (src/init.cc): the nccl-remote-error rule's source. */
const NCCL_LINE =
  'torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:268, remote process exited or there was a network error, NCCL version 2.21.5';

/** Slurm's own SlurmdTimeout (seconds): how long a silent slurmd stays a responding node. */
async function slurmdTimeoutSeconds(): Promise<number> {
  const r = await exec.run(['scontrol', 'show', 'config']);
  const s = Number(/^SlurmdTimeout\s*=\s*(\d+) sec/m.exec(r.stdout)?.[1]);
  if (!Number.isFinite(s) || s <= 0) throw new Error(`no SlurmdTimeout in scontrol show config: ${r.stdout}`);
  return s;
}

const pidFile = (node: string) => join(stack, 'pids', `slurmd-${node}.pid`);
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Stop node's slurmd (this stack's, by its pid file) and wait for it to be gone. */
async function stopSlurmd(node: string): Promise<void> {
  const pid = Number(readFileSync(pidFile(node), 'utf8').trim());
  expect(readFileSync(`/proc/${pid}/comm`, 'utf8').trim()).toBe('slurmd');
  stopped = node;
  process.kill(pid, 'SIGTERM');
  await until(`slurmd of ${node} (pid ${pid}) gone`, async () => !alive(pid), 30_000);
}

/** Start node's slurmd again (as scripts/stack.sh does) and wait until Slurm returns it to service. */
async function restartSlurmd(node: string): Promise<void> {
  const r = await exec.run(['slurmd', '-N', node]);
  if (r.code !== 0) throw new Error(`slurmd -N ${node} failed: ${r.stderr}`);
  stopped = undefined;
  // ReturnToService=1: a node DOWN for not responding comes back when its slurmd answers
  await until(`${node} back in service`, () => partitionUp(node), 120_000);
}

/** A fault file of scripts/stack.sh's faulty-sim, written whole (rename) so the watcher never reads half of it. */
function writeFault(name: string, text: string): string {
  const file = join(faultsDir, name);
  const tmp = join(faultsDir, `.tmp-${name}-${process.pid}`);
  writeFileSync(tmp, `${text}\n`);
  renameSync(tmp, file);
  faultFiles.add(file);
  return file;
}

/** A fault for `node`'s server: it dies with `line` in its log, once or at every start (`always`). */
const injectFault = (node: string, line: string, always = false): string =>
  writeFault(always ? `${node}.always` : node, line);

/** `node`'s server restarted with `flags` added, on the same port (faulty-sim's faults/N.restart). */
const restartServerWith = (node: string, flags: string[]): string => writeFault(`${node}.restart`, flags.join(' '));

/** The simulator's flag that makes it answer every request not wholly cached 200 with no generated token. */
const ZERO_TOKEN_FLAGS = ['--global-cache-hit-threshold', '1'];

/**
 * A drain gate of at least `seconds` before every point after a server's first: polls of a third of
 * it, and the point budgets and the time limit grown by the longer deadline (as productionLike does).
 */
const drainAtLeast =
  (seconds: number) =>
  (p: SweepPlan): void => {
    const pollSeconds = Math.ceil(seconds / 3);
    const idlePolls = Math.ceil(seconds / pollSeconds) + 1; // the first poll is immediate
    const deadlineSeconds = 2 * seconds + 60;
    const more = deadlineSeconds - p.agentx.drain.deadlineSeconds;
    p.agentx.drain = { ...p.agentx.drain, pollSeconds, idlePolls, deadlineSeconds };
    p.pointBudgets = p.pointBudgets.map((b) => ({ ...b, totalSeconds: b.totalSeconds + more }));
    p.slurm.timeLimitMinutes += Math.ceil((more * p.pointBudgets.length) / 60);
  };

/** The engine override's executable set to `binary`, as an operator would configure it. */
const withEngine =
  (binary: string) =>
  (c: SweepConfig): void => {
    const o = c.clusters.local?.engineOverride;
    if (o?.kind !== 'simulator') throw new Error(`the local cluster has no simulator override: ${JSON.stringify(o)}`);
    o.binary = binary;
  };

/** The simulator behind the fault watcher. */
const withFaultySim = withEngine(faultySim);

/** An engine no node has: a bare name srun looks up on the node's PATH. */
const MISSING_ENGINE = 'infersweep-no-such-engine';

beforeAll(async () => {
  if (!existsSync(faultySim)) throw new Error(`${faultySim} missing: run scripts/stack.sh up (it writes faulty-sim)`);
  await until('every node of the partition up', () => partitionUp(), 180_000);
  writeFileSync(historySettings, JSON.stringify({ store: historyStore, confirm: { enabled: false } }));
  process.env.INFERSWEEP_HISTORY_SETTINGS = historySettings;
  c = await connect();
  await quarantine.clear('all');
});
afterAll(async () => {
  if (historyBefore === undefined) delete process.env.INFERSWEEP_HISTORY_SETTINGS;
  else process.env.INFERSWEEP_HISTORY_SETTINGS = historyBefore;
  for (const f of faultFiles) rmSync(f, { force: true });
  if (stopped) await restartSlurmd(stopped);
  await quarantine.clear('all');
  await quarantine.close();
  await cleanupStarted(slurm);
  await c?.connection.close();
});

describe('faulty nodes on the real stack: classified, quarantined or failed as the class decides, the sweep completes', () => {
  it("a node whose slurmd stops → Slurm's NODE_FAIL after SlurmdTimeout, node-health, quarantined, the point re-placed on the other nodes", async () => {
    const timeout = await slurmdTimeoutSeconds();
    // the sweep holds the allocation longer than Slurm takes to judge the node: the slurmd stops as
    // c=1 starts, and c=2's drain gate alone lasts SlurmdTimeout plus two of slurmctld's pings (every
    // SlurmdTimeout/3); a re-placed point runs on a fresh server, with no drain: only the faulty
    // allocation pays for the wait
    const guard = timeout + 2 * Math.ceil(timeout / 3);
    const input = testInput(
      testPlan('latency', [1, 2], (p) => {
        notSaturationGated(p);
        drainAtLeast(guard)(p);
      }),
      'fleet-slurmd-stop',
    );
    const { worker, h } = await startOnNewWorker(c, input);
    let stoppedAt = 0;
    let victim = '';
    const result = (await worker.runUntil(async () => {
      const p = await waitProgress(
        h,
        (q) => pointRunning(1)(q) && (q.allocation?.nodes.length ?? 0) === 2,
        240_000,
        'point c=1 running',
      );
      victim = p.allocation!.nodes[1]!;
      await stopSlurmd(victim);
      stoppedAt = Date.now();
      return h.result();
    })) as SweepResult;

    expect(result.status).toBe('completed');
    expect(result.points.map((p) => [p.concurrency, p.status === 'done' || p.status === 'invalid'])).toEqual([
      [1, true],
      [2, true],
    ]);
    const [lost, replaced] = result.allocations;
    expect(result.allocations).toHaveLength(2);
    expect(lost).toMatchObject({ ended: 'NODE_FAIL', failureClass: 'node-health' });
    expect(lost!.nodes).toContain(victim);
    expect(replaced!.nodes).not.toContain(victim);
    expect(replaced!.excluded).toEqual([victim]);
    // one failed attempt, in c=2's drain gate (or c=1 on a host slow enough that Slurm judged first)
    const failures = result.points.flatMap((p) => p.failures ?? []);
    expect(failures).toEqual([
      expect.objectContaining({
        class: 'node-health',
        rule: expect.stringMatching(/^slurm-(node-fail|reason-node-down)$/),
        action: 're-place',
        quarantined: [victim],
        jobId: lost!.jobId,
      }),
    ]);
    // Slurm's verdict, not an earlier guess: seen no sooner than SlurmdTimeout after the stop, less
    // one ping interval (the slurmd's last answer may precede the stop by that much)
    const seenAfter = (Date.parse(failures[0]!.at) - stoppedAt) / 1000;
    console.log(`[measure] fleet-faults: slurmd of ${victim} stopped → NODE_FAIL seen after ${seenAfter.toFixed(1)} s`);
    expect(seenAfter).toBeGreaterThanOrEqual(timeout - Math.ceil(timeout / 3));
    expect(await quarantine.list()).toEqual([
      expect.objectContaining({ node: victim, class: 'node-health', jobId: lost!.jobId }),
    ]);

    // the node back in service, and nothing of the failed job left on it
    await restartSlurmd(victim);
    await until(`no step daemon of job ${lost!.jobId} left`, async () => {
      const r = await exec.run(['pgrep', '-f', `^slurmstepd: \\[${lost!.jobId}\\.`]);
      return r.code === 1 ? true : undefined;
    });
    await quarantine.clear('all');
  }, 600_000);

  it('a server dying with NCCL errors on a node that stays bad is struck twice, quarantined, its point re-placed; one dying with a CUDA OOM line fails its point at once (cuda-oom, no quarantine)', async () => {
    const input = testInput(testPlan('latency', [1, 2], notSaturationGated, withFaultySim), 'fleet-server-faults');
    const { worker, h } = await startOnNewWorker(c, input, allowingNodeBinaries('local', faultySim));
    let bad = '';
    const { result, final } = await worker.runUntil(async () => {
      // c=1: the head node's NCCL fails under the point, and again at every server started there
      const p1 = await waitProgress(h, pointRunning(1), 240_000, 'point c=1 running');
      bad = p1.allocation!.nodes[0]!;
      injectFault(bad, NCCL_LINE, true);
      // quarantined (the second strike): the sweep's next allocation excludes it, its fault can go
      await until(`${bad} quarantined`, async () => (await quarantine.list()).some((q) => q.node === bad), 240_000);
      rmSync(join(faultsDir, `${bad}.always`), { force: true });
      // c=2 on the other nodes: that head node's server runs out of GPU memory under the point
      const p2 = await waitProgress(h, pointRunning(2), 240_000, 'point c=2 running');
      expect(p2.allocation!.nodes).not.toContain(bad);
      injectFault(p2.allocation!.nodes[0]!, CUDA_OOM_LINE);
      const r = (await h.result()) as SweepResult;
      return { result: r, final: (await h.query(progressQuery)) as SweepProgress };
    });

    expect(result.status).toBe('completed');
    const [c1, c2] = result.points;
    // the NCCL error under the point: re-placed, a strike against the node
    expect(c1!.status === 'done' || c1!.status === 'invalid').toBe(true);
    expect(c1!.failures).toEqual([
      expect.objectContaining({
        class: 'nccl',
        rule: 'nccl-remote-error',
        evidence: expect.stringContaining('remote process exited or there was a network error'),
        nodes: [bad],
        action: 're-place',
      }),
    ]);
    // the server the re-placed allocation started on the same node died too (readiness): the second strike quarantined it
    expect(final.setupFailures).toEqual([
      expect.objectContaining({ class: 'nccl', rule: 'nccl-remote-error', nodes: [bad], quarantined: [bad] }),
    ]);
    // the OOM: failed at once on its first attempt, no node implicated
    expect(c2).toMatchObject({ concurrency: 2, status: 'failed', attempts: 1 });
    expect(c2!.failures).toEqual([
      expect.objectContaining({
        class: 'cuda-oom',
        rule: 'cuda-oom',
        evidence: expect.stringContaining('CUDA out of memory. Tried to allocate'),
        nodes: [],
        action: 'fail-point',
      }),
    ]);
    expect(c2!.failures![0]!.quarantined).toBeUndefined();
    expect(result.allocations.map((a) => a.failureClass)).toEqual(['nccl', 'nccl', 'cuda-oom']);
    const last = result.allocations.at(-1)!;
    expect(last.nodes).not.toContain(bad);
    expect(last.excluded).toEqual([bad]);
    expect(await quarantine.list()).toEqual([
      expect.objectContaining({ node: bad, class: 'nccl', rule: 'nccl-remote-error', strikes: 2 }),
    ]);
    await quarantine.clear('all');
  }, 600_000);

  it('a server answering 200 with no generated token: the point is invalid (zero_output_tokens), zero-output, failed at once; status and history show the class', async () => {
    // c=2's drain gate lasts at least GATE s after c=1 ends: the restart lands in it (a scrape it fails restarts the gate)
    const GATE = 8;
    const input = testInput(
      testPlan(
        'latency',
        [1, 2],
        (p) => {
          notSaturationGated(p);
          drainAtLeast(GATE)(p);
        },
        withFaultySim,
      ),
      'fleet-zero-output',
    );
    const { worker, h } = await startOnNewWorker(c, input, allowingNodeBinaries('local', faultySim));
    const { result, final } = await worker.runUntil(async () => {
      const settled = (q: SweepProgress) =>
        ['done', 'invalid'].includes(q.points.find((p) => p.concurrency === 1)?.status ?? '');
      const p = await waitProgress(h, settled, 240_000, 'point c=1 measured');
      const head = p.allocation!.nodes[0]!;
      const file = restartServerWith(head, ZERO_TOKEN_FLAGS);
      await until(`faulty-sim on ${head} restarted its simulator`, async () => !existsSync(file), 30_000);
      const r = (await h.result()) as SweepResult;
      return { result: r, final: (await h.query(progressQuery)) as SweepProgress };
    });

    expect(result.status).toBe('completed');
    expect(result.allocations).toHaveLength(1);
    const [c1, c2] = result.points;
    // c=1, measured before the restart: tokens, nothing classified
    expect(c1!.summary?.reasons ?? []).not.toContainEqual(expect.stringMatching(/^zero_output_tokens/));
    expect(c1!.failures).toBeUndefined();
    // c=2: every profiled request answered 200 (a success) with usage.completion_tokens 0
    const record = readPoint(input.resultsDir, 2);
    expect(record.num_requests_successful).toBeGreaterThan(0);
    expect(record.request_accounting.records_error_dropped).toBe(0);
    expect(c2).toMatchObject({ concurrency: 2, status: 'invalid', attempts: 1 });
    expect(c2!.summary!.reasons).toContainEqual(
      `zero_output_tokens: ${record.num_requests_successful} successful requests returned 0 output tokens`,
    );
    // classified where a failed attempt is: zero-output, the point failed at once (no retry), no node implicated
    expect(c2!.failures).toEqual([
      expect.objectContaining({
        class: 'zero-output',
        rule: 'zero-output-tokens',
        evidence: expect.stringMatching(/^zero_output_tokens: \d+ successful requests returned 0 output tokens$/),
        nodes: [],
        action: 'fail-point',
        jobId: result.allocations[0]!.jobId,
      }),
    ]);
    expect(await quarantine.list()).toEqual([]);
    // the status (`infersweep status`) names the class and the decision
    const line = pointLine(final.points.find((p) => p.concurrency === 2)!);
    expect(line).toMatch(/INVALID .*zero_output_tokens: /);
    expect(line).toContain('failed attempts: zero-output → fail-point');
    // the history stores the class with the point
    const store = await openStore(historyStore);
    try {
      const stored = await store.run(input.sweepId);
      expect(stored.map((q) => [q.key.concurrency, q.valid, q.failureClasses])).toEqual([
        [1, expect.any(Boolean), undefined],
        [2, false, ['zero-output']],
      ]);
    } finally {
      await store.close();
    }
  }, 600_000);

  it('an engine the nodes do not have: setup, the sweep waits for an operator naming the program, no node suspected; abort ends it with nothing held', async () => {
    const input = testInput(
      testPlan('latency', [1], notSaturationGated, withEngine(MISSING_ENGINE)),
      'fleet-missing-engine',
    );
    const { worker, h } = await startOnNewWorker(c, input, allowingNodeBinaries('local', MISSING_ENGINE));
    const { result, waiting } = await worker.runUntil(async () => {
      const waiting = await waitProgress(h, (q) => q.phase === 'awaiting-operator', 240_000, 'awaiting-operator');
      await h.executeUpdate(abortUpdate, { args: [{ reason: 'the engine is not installed' }] });
      return { result: (await h.result()) as SweepResult, waiting };
    });

    console.info(`awaiting an operator: ${waiting.awaitingOperator?.reason}`);
    // srun's execve on the node found no such program (at launch, or in the gone step's log): one failed set-up,
    // classified setup by the error's type, the operator asked, with the program named; no retry, no new allocation
    expect(waiting.awaitingOperator?.reason).toContain(`\`${MISSING_ENGINE}\` was not found on the cluster`);
    expect(waiting.setupFailures).toEqual([
      expect.objectContaining({ class: 'setup', rule: 'missing-program', nodes: [], action: 'wait-operator' }),
    ]);
    expect(waiting.allocations).toHaveLength(1);
    expect(waiting.allocations[0]).toMatchObject({ ended: 'launch-failed', failureClass: 'setup' });
    expect(waiting.points[0]).toMatchObject({ concurrency: 1, status: 'pending', attempts: 0 });
    expect(result.status).toBe('aborted');
    expect(await quarantine.list()).toEqual([]);
    await expectNoLeak(slurm, result);
  }, 600_000);
});
