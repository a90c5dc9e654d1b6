/**
 * Workflow logic with mocked activities: each failure kind and the recovery the sweep makes.
 * The mocks throw the libs' real typed errors and the worker installs the real activity interceptor,
 * so the kind → ApplicationFailure mapping is exercised too. These are unit tests of the workflow
 * (sweep.int.test.ts runs the real activities on the real stack).
 *
 * Server and workers: ./unit-workflow-env.ts (TestWorkflowEnvironment.createLocal on the repo's
 * Temporal CLI).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { MockActivityEnvironment, TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import {
  WorkflowFailedError,
  WorkflowNotFoundError,
  type WorkflowHandle,
  type WorkflowHandleWithFirstExecutionRunId,
} from '@temporalio/client';
import {
  AllocationError,
  AllocationLostError,
  CommandAbortedError,
  CommandFailedError,
  StepLaunchError,
} from '@infersweep/slurm';
import { BindError } from '@infersweep/topology';
import { IdleRankError } from '@infersweep/agentx';
import {
  abortUpdate,
  ledgerTotal,
  progressQuery,
  retryNowUpdate,
  searchAttributeKeys,
  type ChildSweepOutcome,
  type PointSummary,
  type SweepInput,
  type SweepProgress,
  type SweepResult,
} from '@infersweep/sweep';
import { InsufficientTimeError, ServerLostError, sweepActivityInterceptors } from '../src/activities';
import { QuarantineBlocksError } from '../src/activities/quarantine';
import type { Allocation, Deployment, SweepActivities } from '../src/activities/types';
import { RELEASE_FAILED, type SweepRunInput } from '../src/workflows/run';
import { recordHistory } from '@infersweep/testkit/history-fixtures';
import { childSweepId } from '@infersweep/core';
import { happyActivities, mockedWorker, unitSweepInput, unitWorkflowEnv } from './unit-workflow-env';

type Verb = keyof SweepActivities;
/** Per sweep: what a mocked activity does on its n-th call (1-based) with this input. */
type Script = Partial<Record<Verb, (input: Record<string, unknown>, call: number) => unknown>>;

const scripts = new Map<string, Script>();
const calls = new Map<string, { verb: Verb; input: Record<string, unknown> }[]>();

/** What each mocked activity does unless a test's script says otherwise: everything succeeds. */
const defaults = happyActivities;

function mockActivities(): SweepActivities {
  const verbs = Object.keys(defaults) as Verb[];
  return Object.fromEntries(
    verbs.map((verb) => [
      verb,
      async (input: Record<string, unknown>) => {
        // a night's judgement is the scheduled run's (its workflow id)
        const sweepId = String(
          input.sweepId ??
            (input.planRef as { resultsDir?: string } | undefined)?.resultsDir ??
            input.resultsDir ??
            input.night ??
            '',
        ).replace(/^\/results\//, '');
        const log = calls.get(sweepId) ?? [];
        log.push({ verb, input });
        calls.set(sweepId, log);
        const n = log.filter((c) => c.verb === verb).length;
        const script = scripts.get(sweepId)?.[verb];
        return script ? script(input, n) : defaults[verb](input);
      },
    ]),
  ) as unknown as SweepActivities;
}

let env: TestWorkflowEnvironment;
let worker: { worker: Worker; stop(): Promise<void> };
const taskQueue = `unit-${randomUUID()}`;

beforeAll(async () => {
  env = await unitWorkflowEnv();
  worker = await mockedWorker(env, taskQueue, mockActivities());
}, 120_000);

afterAll(async () => {
  await worker?.stop();
  await env?.teardown();
});

function sweep(script: Script, extra: Partial<SweepRunInput> = {}): SweepRunInput {
  const sweepId = `unit-${randomUUID().slice(0, 8)}`;
  scripts.set(sweepId, script);
  const input = unitSweepInput(sweepId);
  return { ...input, ...extra };
}

async function run(
  input: SweepRunInput,
): Promise<{ handle: WorkflowHandleWithFirstExecutionRunId; result: Promise<SweepResult> }> {
  const handle = await env.client.workflow.start('sweepWorkflow', {
    taskQueue,
    workflowId: input.sweepId,
    args: [input],
  });
  return { handle, result: handle.result() as Promise<SweepResult> };
}

const callsOf = (input: SweepInput, verb: Verb) =>
  (calls.get(input.sweepId) ?? []).filter((c) => c.verb === verb).map((c) => c.input);

async function progressUntil(h: WorkflowHandle, pred: (p: SweepProgress) => boolean): Promise<SweepProgress> {
  for (;;) {
    const p = await h.query(progressQuery).catch(() => undefined);
    if (p && pred(p)) return p;
    // a sweep that ended will never get there: fail now, saying how it ended
    const closed =
      p &&
      ['completed', 'failed', 'cancelled', 'aborted'].includes(p.phase) &&
      (await h.describe()).status.name !== 'RUNNING';
    if (closed) throw new Error(`sweep ended ${p.phase}: ${p.message ?? ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('sweepWorkflow with mocked activities', () => {
  it('happy path: every point done on one allocation; only prepareSweep carries the plan, the rest a {planHash, resultsDir} reference', async () => {
    const input = sweep({});
    const r = await (await run(input)).result;
    expect(r.status).toBe('completed');
    expect(r.points.map((p) => [p.concurrency, p.status, p.attempts])).toEqual([
      [1, 'done', 1],
      [2, 'done', 1],
      [4, 'done', 1],
    ]);
    expect(r.allocations.map((a) => a.ended)).toEqual(['released']);
    expect(callsOf(input, 'prepareSweep')[0]!.plan).toEqual(input.plan);
    for (const verb of [
      'allocate',
      'launchServer',
      'waitReady',
      'runPoint',
      'captureLogs',
      'stopServer',
      'release',
    ] as const) {
      for (const i of callsOf(input, verb)) {
        expect(i.plan, verb).toBeUndefined();
        expect(i.planRef, verb).toEqual({ planHash: 'p0', resultsDir: input.resultsDir });
      }
    }
  });

  it('pointsPerAllocation 2: a fresh allocation after every second point (InferenceX runs 1)', async () => {
    const input = sweep({}, { pointsPerAllocation: 2 });
    const r = await (await run(input)).result;
    expect(r.status).toBe('completed');
    expect(r.points.map((p) => [p.concurrency, p.status])).toEqual([
      [1, 'done'],
      [2, 'done'],
      [4, 'done'],
    ]);
    expect(r.allocations.map((a) => a.ended)).toEqual(['released', 'released']);
    expect(callsOf(input, 'runPoint').map((i) => [i.concurrency, (i.deployment as Deployment).jobId])).toEqual([
      [1, '100'],
      [2, '100'],
      [4, '200'],
    ]);
  });

  it('image import on the head node: after each allocation, with it, never before allocating', async () => {
    const input = sweep({}, { importImage: true, importImageOn: 'head-node', pointsPerAllocation: 2 });
    const r = await (await run(input)).result;
    expect(r.status).toBe('completed');
    const order = (calls.get(input.sweepId) ?? [])
      .map((c) => c.verb)
      .filter((v) => v === 'allocate' || v === 'importImage' || v === 'launchServer');
    expect(order).toEqual(['allocate', 'importImage', 'launchServer', 'allocate', 'importImage', 'launchServer']);
    expect(callsOf(input, 'importImage').map((i) => (i.allocation as Allocation).jobId)).toEqual(['100', '200']);
    // the default (login node) imports once, before the first allocation, without one
    const login = sweep({}, { importImage: true });
    await (
      await run(login)
    ).result;
    expect(
      (calls.get(login.sweepId) ?? []).map((c) => c.verb).filter((v) => v === 'allocate' || v === 'importImage'),
    ).toEqual(['importImage', 'allocate']);
    expect(callsOf(login, 'importImage')[0]!.allocation).toBeUndefined();
  });

  it('loss (AllocationLostError, NODE_FAIL) mid-point: point requeued without an attempt, a new allocation, done points not rerun', async () => {
    const input = sweep({
      runPoint: (i, n) => {
        if (i.concurrency === 2 && n === 2)
          throw new AllocationLostError('allocation 100 is NODE_FAIL', {
            state: 'NODE_FAIL',
            reason: 'NodeDown',
            context: { jobId: '100' },
          });
        return defaults.runPoint(i);
      },
    });
    const r = await (await run(input)).result;
    expect(r.points.map((p) => [p.concurrency, p.status, p.attempts])).toEqual([
      [1, 'done', 1],
      [2, 'done', 1],
      [4, 'done', 1],
    ]);
    expect(r.allocations.map((a) => a.ended)).toEqual(['NODE_FAIL', 'released']);
    expect(callsOf(input, 'runPoint').map((i) => i.concurrency)).toEqual([1, 2, 2, 4]);
    expect(callsOf(input, 'captureLogs')).toHaveLength(2);
  });

  it('loss during readiness (ServerLostError): the allocation ends server-lost and the sweep carries on', async () => {
    const input = sweep({
      waitReady: (_i, n) => {
        if (n === 1) throw new ServerLostError('server step exited', { jobId: '100', step: 'readiness' });
        return { seconds: 1 };
      },
    });
    const r = await (await run(input)).result;
    expect(r.status).toBe('completed');
    expect(r.allocations.map((a) => a.ended)).toEqual(['server-lost', 'released']);
  });

  it('input error (BindError at launch) fails the sweep at once: one allocation, released, no allocation attempts burnt', async () => {
    const input = sweep({
      launchServer: () => {
        throw new BindError('node2 has no address');
      },
    });
    const err = await (await run(input)).result.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expect(callsOf(input, 'allocate')).toHaveLength(1);
    expect(callsOf(input, 'launchServer')).toHaveLength(1);
    expect(callsOf(input, 'release').map((i) => i.jobId)).toEqual(['100']);
  });

  it('a fatal point failure (IdleRankError) is not retried in place: the point fails after maxPointAttempts, the server restarts between', async () => {
    const input = sweep({
      runPoint: (i) => {
        if (i.concurrency === 1) throw new IdleRankError('idle DP rank 3', [3]);
        return defaults.runPoint(i);
      },
    });
    const r = await (await run(input)).result;
    expect(r.points.map((p) => [p.concurrency, p.status, p.attempts])).toEqual([
      [1, 'failed', 2],
      [2, 'done', 1],
      [4, 'done', 1],
    ]);
    expect(callsOf(input, 'runPoint').map((i) => i.concurrency)).toEqual([1, 1, 2, 4]);
    expect(callsOf(input, 'launchServer')).toHaveLength(3);
    expect(r.allocations).toHaveLength(1);
  });

  it('a fatal launch failure counts allocation attempts; past the budget the sweep waits for an operator, abort ends it', async () => {
    const input = sweep({
      launchServer: () => {
        throw new StepLaunchError('srun: error: invalid partition', { kind: 'fatal' });
      },
    });
    const { handle, result } = await run(input);
    const waiting = await progressUntil(handle, (p) => p.phase === 'awaiting-operator');
    expect(waiting.allocations.map((a) => a.ended)).toEqual(['launch-failed', 'launch-failed']);
    await handle.executeUpdate(abortUpdate, { args: [{ reason: 'unit test' }] });
    const r = await result;
    expect(r.status).toBe('aborted');
    expect(callsOf(input, 'allocate')).toHaveLength(2);
  });

  it('the time guard on a fresh allocation is a failed attempt; after a point it is an orderly replacement', async () => {
    const input = sweep(
      {
        runPoint: (i, n) => {
          const tooLittle = () => new InsufficientTimeError('allocation has 10 s left', { jobId: '100' });
          if (n === 1) throw tooLittle(); // c=1 on allocation 1, nothing ran yet
          if (i.concurrency === 2 && n === 3) throw tooLittle(); // c=2 on allocation 2 after c=1
          return defaults.runPoint(i);
        },
      },
      { maxAllocationAttempts: 3 },
    );
    const r = await (await run(input)).result;
    expect(r.status).toBe('completed');
    expect(r.allocations.map((a) => a.ended)).toEqual(['allocation-failed', 'insufficient-time', 'released']);
  });

  it('a worker shutdown (retryable WorkerShutdown) is retried in place: no point attempt, same allocation', async () => {
    // the failure is what the real activity interceptor makes of an activity cancelled by its worker's shutdown
    const failure = await shutdownFailure();
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({ type: 'WorkerShutdown', nonRetryable: false });
    const input = sweep({
      runPoint: (i, n) => {
        if (n <= 2) throw failure;
        return defaults.runPoint(i);
      },
    });
    const r = await (await run(input)).result;
    expect(r.points.map((p) => [p.concurrency, p.status, p.attempts])).toEqual([
      [1, 'done', 1],
      [2, 'done', 1],
      [4, 'done', 1],
    ]);
    expect(r.allocations.map((a) => a.ended)).toEqual(['released']);
    expect(callsOf(input, 'runPoint').map((i) => i.concurrency)).toEqual([1, 1, 1, 2, 4]);
  });

  it('worker shutdowns past an activity maximumAttempts (N = 5 + 1 for runPoint and launchServer) keep the point, the server and the allocation', async () => {
    const failure = await shutdownFailure();
    const n = 6; // maximumAttempts of runPoint and launchServer (./src/workflows/activities.ts) + 1
    const onPoint = sweep({
      runPoint: (i, call) => {
        if (call <= n) throw failure;
        return defaults.runPoint(i);
      },
    });
    const onLaunch = sweep({
      launchServer: (i, call) => {
        if (call <= n) throw failure;
        return defaults.launchServer(i);
      },
    });
    const [p, l] = await Promise.all([(await run(onPoint)).result, (await run(onLaunch)).result]);
    for (const r of [p, l]) {
      expect(r.status).toBe('completed');
      expect(r.points.map((x) => [x.concurrency, x.status, x.attempts])).toEqual([
        [1, 'done', 1],
        [2, 'done', 1],
        [4, 'done', 1],
      ]);
      expect(r.allocations.map((a) => a.ended)).toEqual(['released']);
    }
    expect(callsOf(onPoint, 'runPoint').map((i) => i.concurrency)).toEqual([1, 1, 1, 1, 1, 1, 1, 2, 4]);
    expect(callsOf(onPoint, 'launchServer')).toHaveLength(1);
    expect(callsOf(onLaunch, 'launchServer').map((i) => i.serverIndex)).toEqual([1, 1, 1, 1, 1, 1, 1]);
    expect(callsOf(onLaunch, 'allocate')).toHaveLength(1);
    await keepFixture(onPoint.sweepId, 'worker-shutdowns-past-max-attempts');
  }, 150_000);

  it('continues as new past the history bound, carrying points, allocation and server; nothing rerun', async () => {
    const input = sweep({}, { points: [1, 2, 4, 8, 16, 32], historyEventLimit: 30 });
    const { handle, result } = await run(input);
    const r = await result;
    expect(r.status).toBe('completed');
    expect(r.points.every((p) => p.status === 'done' && p.attempts === 1)).toBe(true);
    expect(r.allocations.map((a) => a.ended)).toEqual(['released']);
    expect(callsOf(input, 'allocate')).toHaveLength(1);
    expect(callsOf(input, 'launchServer')).toHaveLength(1);
    expect(callsOf(input, 'runPoint').map((i) => i.concurrency)).toEqual([1, 2, 4, 8, 16, 32]);
    const first = env.client.workflow.getHandle(input.sweepId, handle.firstExecutionRunId);
    expect((await first.describe()).status.name).toBe('CONTINUED_AS_NEW');
    let runs = 0;
    for await (const _w of env.client.workflow.list({ query: `WorkflowId = '${input.sweepId}'` })) runs++;
    expect(runs).toBeGreaterThanOrEqual(2);
  });

  it('a robust search: a spurious invalid point and a client limit are measured again in fresh windows, across continue-as-new', async () => {
    // TTFT p99 = 19 ms × c (the SLO, 500 ms, holds to c = 26); c = 16's first window has an idle
    // rank (not load); from c = 32 the client saturates: the limit is client-bound, never 32
    const summary = (i: Record<string, unknown>): PointSummary => {
      const c = i.concurrency as number;
      const window = (i.window as number | undefined) ?? 1;
      const base = { concurrency: c, resultPath: `/r/c${c}/w${window}`, reused: false };
      if (c >= 32) return { ...base, valid: false, reasons: ['client_saturated: event loop lag 900 ms'] };
      if (c === 16 && window === 1) return { ...base, valid: false, reasons: ['idle_dp_rank: engine 1 idle'] };
      return { ...base, valid: true, reasons: [], ttftP99Ms: 19 * c, logSe: { ttftP99Ms: 0.005 } };
    };
    const input = sweep(
      { runPoint: (i) => summary(i) },
      {
        points: [8],
        historyEventLimit: 40,
        search: {
          goal: ['slo-limit'],
          slo: { ttftMs: { p99: 500 } },
          minConcurrency: 1,
          maxConcurrency: 64,
          maxAddedPoints: 20,
          resolution: { absolute: 1 },
          pointGpuHours: 0,
        },
      },
    );
    const { handle, result } = await run(input);
    const r = await result;
    expect(r.status).toBe('completed');
    const windows = callsOf(input, 'runPoint').map(
      (i) => `${String(i.concurrency)}${i.window ? `w${String(i.window)}` : ''}`,
    );
    expect(windows).toEqual(['8', '16', '16w2', '32', '32w2', '24', '28', '26', '27']);
    expect(r.search?.limit).toMatchObject({
      concurrency: 26,
      below: 26,
      above: 27,
      status: 'found',
      binding: 'TTFT p99',
      ci: { lower: 26, upper: 26 },
    });
    const c16 = r.points.find((p) => p.concurrency === 16)!;
    expect(c16.windows?.map((w) => w.summary?.reasons)).toEqual([['idle_dp_rank: engine 1 idle']]);
    expect(c16.summary?.resultPath).toBe('/r/c16/w2');
    expect(
      (await env.client.workflow.getHandle(input.sweepId, handle.firstExecutionRunId).describe()).status.name,
    ).toBe('CONTINUED_AS_NEW');
    await keepFixture(input.sweepId, 'robust-search');
  });

  it('a continued run holds what the last one held: the image imported on the job is not imported again, nothing reallocated', async () => {
    // server-per-point launches a server per point on the one allocation, so a continued run launches
    // servers on a job the image was already imported on (head-node import: once per job)
    const input = sweep(
      {},
      {
        points: [1, 2, 4, 8, 16, 32],
        historyEventLimit: 40,
        policy: 'server-per-point',
        importImage: true,
        importImageOn: 'head-node',
      },
    );
    const { handle, result } = await run(input);
    const r = await result;
    expect(r.status).toBe('completed');
    let runs = 0;
    for await (const _w of env.client.workflow.list({ query: `WorkflowId = '${input.sweepId}'` })) runs++;
    expect(runs).toBeGreaterThanOrEqual(2);
    expect(
      (await env.client.workflow.getHandle(input.sweepId, handle.firstExecutionRunId).describe()).status.name,
    ).toBe('CONTINUED_AS_NEW');
    expect(callsOf(input, 'allocate')).toHaveLength(1);
    expect(callsOf(input, 'importImage').map((i) => (i.allocation as Allocation).jobId)).toEqual(['100']);
    expect(callsOf(input, 'launchServer').map((i) => i.serverIndex)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(callsOf(input, 'runPoint').map((i) => i.concurrency)).toEqual([1, 2, 4, 8, 16, 32]);
  });
});

/** With INFERSWEEP_RECORD_HISTORIES=1, keep a finished sweep's history as a replay fixture (libs/testkit/src/history-fixtures.ts). */
async function keepFixture(workflowId: string, scenario: string): Promise<void> {
  await recordHistory(env.client.workflow.getHandle(workflowId), scenario);
}

/**
 * Run an activity under the real activity interceptor in a mock activity context, cancel it the way
 * a worker shutting down does (reason WORKER_SHUTDOWN), and return what the interceptor threw. The
 * activity itself only sees its sleep cancelled; it never throws WorkerShutdown.
 */
async function shutdownFailure(): Promise<unknown> {
  const mock = new MockActivityEnvironment(
    { activityType: 'runPoint' },
    { interceptors: [sweepActivityInterceptors({ heartbeatMs: 1000 })] },
  );
  let thrownByActivity: unknown;
  const ran = mock.run(async () => {
    try {
      await Context.current().sleep(60_000);
    } catch (e) {
      thrownByActivity = e;
      throw e;
    }
  });
  mock.cancel('WORKER_SHUTDOWN');
  const failure = await ran.then(
    () => new Error('the activity ended without the shutdown'),
    (e: unknown) => e,
  );
  expect(thrownByActivity).toBeInstanceOf(CancelledFailure);
  return failure;
}

/** The failure a failed workflow ended with (its cause: an ApplicationFailure thrown by the workflow). */
async function failureOf(result: Promise<unknown>): Promise<ApplicationFailure> {
  const err = await result.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(WorkflowFailedError);
  const cause = (err as WorkflowFailedError).cause;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  return cause as ApplicationFailure;
}

const scancelFails = (jobId: unknown) =>
  new CommandFailedError(`scancel ${String(jobId)}: exit 1: slurm_kill_job error: Unable to contact slurm controller`, {
    context: { jobId: String(jobId), step: 'release' },
  });
const releaseFails: Script['release'] = (i) => {
  throw scancelFails(i.jobId);
};
const firstReleaseFails: Script['release'] = (i, n) => {
  if (n === 1) throw scancelFails(i.jobId);
  return { ended: 'released', state: 'RUNNING' };
};

/** A sweep whose release fails as `release` says, once it waits for the operator. */
async function waitingOnRelease(release: Script['release'], extra: Partial<SweepRunInput>) {
  const input = sweep({ release }, extra);
  const { handle, result } = await run(input);
  const waiting = await progressUntil(handle, (p) => p.phase === 'awaiting-operator');
  return { input, handle, result, waiting };
}

describe('a job the sweep owns is never forgotten', () => {
  it('a release that keeps failing waits for the operator, names the job and how to clear it, keeps it recorded; retryNow releases it and the sweep goes on', async () => {
    const { input, handle, result, waiting } = await waitingOnRelease(firstReleaseFails, {
      points: [1, 2],
      pointsPerAllocation: 1,
    });
    const reason = waiting.awaitingOperator!.reason;
    expect(reason).toContain('job 100');
    expect(reason).toContain(waiting.allocations[0]!.jobName);
    expect(reason).toContain('scancel 100');
    expect(reason).toContain(`infersweep resume ${input.sweepId}`);
    expect(waiting.allocation?.jobId).toBe('100');
    expect(waiting.allocations[0]!.ended).toBeUndefined();
    await handle.executeUpdate(retryNowUpdate, { args: [{}] });
    const r = await result;
    expect(r.status).toBe('completed');
    expect(r.points.map((p) => [p.concurrency, p.status])).toEqual([
      [1, 'done'],
      [2, 'done'],
    ]);
    expect(r.allocations.map((a) => [a.jobId, a.ended])).toEqual([
      ['100', 'released'],
      ['200', 'released'],
    ]);
    expect(callsOf(input, 'release').map((i) => i.jobId)).toEqual(['100', '100', '200']);
    expect(callsOf(input, 'runPoint').map((i) => (i.deployment as Deployment).jobId)).toEqual(['100', '200']);
  });

  it('abort during that wait: one last try; when it fails the allocation ends release-failed naming the job, and the sweep fails loudly', async () => {
    const { input, handle, result } = await waitingOnRelease(releaseFails, { points: [1] });
    await handle.executeUpdate(abortUpdate, { args: [{ reason: 'unit test' }] });
    const failure = await failureOf(result);
    expect(failure.type).toBe(RELEASE_FAILED);
    expect(failure.message).toContain('scancel 100');
    expect(callsOf(input, 'release').map((i) => i.jobId)).toEqual(['100', '100']);
    const p = await handle.query(progressQuery);
    expect(p.phase).toBe('failed');
    expect(p.allocation?.jobId).toBe('100');
    expect(p.allocations.map((a) => a.ended)).toEqual(['release-failed']);
    expect(p.allocations[0]!.reason).toContain('Job 100');
  });

  it('abort during that wait when the last try succeeds: released, the sweep ends aborted, the next point not run', async () => {
    const { input, handle, result } = await waitingOnRelease(firstReleaseFails, {
      points: [1, 2],
      pointsPerAllocation: 1,
    });
    await handle.executeUpdate(abortUpdate, { args: [{ reason: 'unit test' }] });
    const r = await result;
    expect(r.status).toBe('aborted');
    expect(r.points.map((p) => p.status)).toEqual(['done', 'pending']);
    expect(r.allocations.map((a) => a.ended)).toEqual(['released']);
    expect(callsOf(input, 'release').map((i) => i.jobId)).toEqual(['100', '100']);
  });

  it('a cancel of the workflow during that wait: one last try, then release-failed and a failed (not silently cancelled) sweep', async () => {
    const { input, handle, result } = await waitingOnRelease(releaseFails, { points: [1] });
    await handle.cancel();
    const failure = await failureOf(result);
    expect(failure.type).toBe(RELEASE_FAILED);
    expect(failure.message).toContain('scancel 100');
    expect(callsOf(input, 'release')).toHaveLength(2);
    expect((await handle.describe()).status.name).toBe('FAILED');
  });

  it('an unreachable cluster counts allocation attempts, reaches the operator wait, and history stays bounded across operator retries', async () => {
    const limit = 60;
    const input = sweep(
      {
        allocate: () => {
          // what the workflow sees once the activity's retries are spent (non-retryable here to keep the test short)
          throw new AllocationError('ssh: connect to host login port 22: Connection refused', { kind: 'fatal' });
        },
      },
      { historyEventLimit: limit },
    );
    const { handle, result } = await run(input);
    const latest = env.client.workflow.getHandle(input.sweepId);
    const retries = 4;
    for (let k = 1; k <= retries + 1; k++) {
      const p = await progressUntil(latest, (q) => q.phase === 'awaiting-operator' && q.allocations.length === 2 * k);
      expect(p.allocations.map((a) => a.ended)).toEqual(Array(2 * k).fill('allocation-failed'));
      if (k <= retries) await latest.executeUpdate(retryNowUpdate, { args: [{}] });
    }
    // every attempt's request was withdrawn by name, none leaked
    expect(callsOf(input, 'release')).toHaveLength(2 * (retries + 1));
    await latest.executeUpdate(abortUpdate, { args: [{ reason: 'unit test' }] });
    expect((await result).status).toBe('aborted');
    const lengths: number[] = [];
    for await (const w of env.client.workflow.list({ query: `WorkflowId = '${input.sweepId}'` }))
      lengths.push(w.historyLength);
    expect(lengths.length).toBeGreaterThanOrEqual(2);
    // a run continues as new at the first loop turn past the limit: at most one operator round (~40 events) over it
    for (const n of lengths) expect(n).toBeLessThan(limit + 50);
    expect(
      (await env.client.workflow.getHandle(input.sweepId, handle.firstExecutionRunId).describe()).status.name,
    ).toBe('CONTINUED_AS_NEW');
  });
});

describe('a failed log capture never releases a healthy allocation', () => {
  const captureFails = (i: Record<string, unknown>) => {
    throw new CommandFailedError(`rsync of ${String(i.destDir)} failed: exit 23`);
  };

  it('server-per-point: the sweep goes on on the same allocation, the missing logs noted on the allocation record', async () => {
    const input = sweep({ captureLogs: captureFails }, { policy: 'server-per-point' });
    const r = await (await run(input)).result;
    expect(r.status).toBe('completed');
    expect(r.points.map((p) => p.status)).toEqual(['done', 'done', 'done']);
    expect(callsOf(input, 'allocate')).toHaveLength(1);
    expect(callsOf(input, 'runPoint').map((i) => (i.deployment as Deployment).jobId)).toEqual(['100', '100', '100']);
    expect(callsOf(input, 'stopServer')).toHaveLength(3);
    expect(r.allocations.map((a) => a.ended)).toEqual(['released']);
    expect(r.allocations[0]!.warnings).toHaveLength(3);
    expect(r.allocations[0]!.warnings![0]).toMatch(/^log capture of server 1 on job 100 failed .*rsync/);
  });

  it('at teardown: the allocation is still released and the missing logs noted', async () => {
    const input = sweep({ captureLogs: captureFails }, { points: [1] });
    const r = await (await run(input)).result;
    expect(r.status).toBe('completed');
    expect(callsOf(input, 'stopServer')).toHaveLength(1);
    expect(r.allocations.map((a) => a.ended)).toEqual(['released']);
    expect(r.allocations[0]!.warnings).toEqual([expect.stringMatching(/^log capture of server 1 on job 100 failed/)]);
  });
});

describe('sweepAllWorkflow, one child sweep per orientation', () => {
  const startAll = (workflowId: string, sweeps: SweepInput[], perRun?: { resultsRoot: string }, schedule?: string) =>
    env.client.workflow.start('sweepAllWorkflow', {
      taskQueue,
      workflowId,
      args: [{ sweeps, maxConcurrentSweeps: 1, ...(perRun ? { perRun } : {}), ...(schedule ? { schedule } : {}) }],
    });

  it('every orientation runs when one fails; each outcome carries status, error or result, sweepId and resultsDir', async () => {
    const orientations = ['balanced', 'latency', 'throughput'];
    const sweeps = orientations.map((orientation) =>
      sweep(
        orientation === 'latency'
          ? {
              launchServer: () => {
                throw new BindError('node2 has no address');
              },
            }
          : {},
        { orientation, points: [1] },
      ),
    );
    const outcomes = (await (
      await startAll(`all-${randomUUID().slice(0, 8)}`, sweeps)
    ).result()) as ChildSweepOutcome[];
    expect(outcomes.map((o) => [o.orientation, o.sweepId, o.resultsDir, o.status])).toEqual(
      sweeps.map((s, i) => [s.orientation, s.sweepId, s.resultsDir, i === 1 ? 'failed' : 'completed']),
    );
    expect(outcomes[1]!.error).toBe('node2 has no address');
    expect(outcomes[1]!.result).toBeUndefined();
    for (const i of [0, 2]) {
      expect(outcomes[i]!.error).toBeUndefined();
      expect(outcomes[i]!.result?.sweepId).toBe(sweeps[i]!.sweepId);
      expect(outcomes[i]!.result?.points.map((p) => p.status)).toEqual(['done']);
    }
    // the failed child released what it held; the one after it ran
    expect(callsOf(sweeps[1]!, 'release').map((i) => i.jobId)).toEqual(['100']);
    expect(callsOf(sweeps[2]!, 'runPoint')).toHaveLength(1);
  });

  it('a run whose children failed or measured nothing ends with a verdict that says so, never none', async () => {
    const unmeasured = () => ({ regressions: 0, unmeasured: 2, label: 'unmeasured:2', store: '/results', skipped: [] });
    const sweeps = [
      sweep({ recordHistory: unmeasured }, { orientation: 'balanced', points: [1] }),
      sweep({ launchServer: () => Promise.reject(new BindError('node2 has no address')) }, { orientation: 'latency' }),
      sweep({}, { orientation: 'throughput', points: [1] }),
    ];
    const h = await startAll(`all-${randomUUID().slice(0, 8)}`, sweeps);
    const outcomes = (await h.result()) as ChildSweepOutcome[];
    expect(outcomes.map((o) => [o.status, o.result?.unmeasured])).toEqual([
      ['completed', 2],
      ['failed', undefined],
      ['completed', undefined],
    ]);
    const label = (await h.describe()).typedSearchAttributes.get(searchAttributeKeys.regression);
    expect(label).toBe('unmeasured:2,failed:1');
  });

  it('perRun (schedules): children get childSweepId(parent, orientation) and folders under perRun.resultsRoot', async () => {
    const parentId = `sched-${randomUUID().slice(0, 8)}`;
    const sweeps = ['balanced', 'latency'].map((orientation) => sweep({}, { orientation, points: [1] }));
    const outcomes = (await (
      await startAll(parentId, sweeps, { resultsRoot: '/results' })
    ).result()) as ChildSweepOutcome[];
    const ids = sweeps.map((s) => childSweepId(parentId, s.orientation));
    expect(outcomes.map((o) => [o.sweepId, o.resultsDir, o.status])).toEqual(
      ids.map((id) => [id, `/results/${id}`, 'completed']),
    );
    for (const id of ids) {
      expect((await env.client.workflow.getHandle(id).describe()).status.name).toBe('COMPLETED');
      const runPoints = (calls.get(id) ?? []).filter((c) => c.verb === 'runPoint').map((c) => c.input);
      expect(runPoints.map((i) => [i.sweepId, i.resultsDir])).toEqual([[id, `/results/${id}`]]);
    }
    // the inputs' own ids were not used
    for (const s of sweeps) expect(calls.get(s.sweepId)).toBeUndefined();
  });

  it("a schedule's run is one night: its sweeps store their points, the run judges them together and carries the label", async () => {
    const parentId = `sched-${randomUUID().slice(0, 8)}`;
    const orientations = ['balanced', 'latency', 'throughput'];
    const sweeps = orientations.map((orientation) => sweep({}, { orientation, points: [1] }));
    const ids = sweeps.map((s) => childSweepId(parentId, s.orientation));
    // the night: balanced regressed, latency's points were not in the store (its sweep could not store them)
    scripts.set(parentId, {
      judgeNight: (i) => {
        const runs = i.runs as { sweepId: string }[];
        const verdict = (sweepId: string, regressions: number) => ({
          sweepId,
          regressions,
          unmeasured: 0,
          label: String(regressions || 'none'),
          store: '/results',
          skipped: [],
        });
        return { runs: [verdict(runs[0]!.sweepId, 2), verdict(runs[2]!.sweepId, 0)], missing: [runs[1]!.sweepId] };
      },
    });
    const h = await startAll(parentId, sweeps, { resultsRoot: '/results' }, 'infersweep-nightly');
    const outcomes = (await h.result()) as ChildSweepOutcome[];
    // each sweep stored its points with the night it belongs to, and judged nothing itself
    for (const id of ids) {
      const stored = (calls.get(id) ?? []).filter((c) => c.verb === 'storeHistory').map((c) => c.input);
      expect(stored.map((i) => [i.sweepId, i.night])).toEqual([
        [id, { schedule: 'infersweep-nightly', runId: parentId }],
      ]);
      expect((calls.get(id) ?? []).some((c) => c.verb === 'recordHistory')).toBe(false);
      const childLabel = (await env.client.workflow.getHandle(id).describe()).typedSearchAttributes.get(
        searchAttributeKeys.regression,
      );
      expect(childLabel).toBeUndefined();
    }
    // the night's one judgement, over every completed sweep
    const judged = (calls.get(parentId) ?? []).filter((c) => c.verb === 'judgeNight').map((c) => c.input);
    expect(judged).toEqual([
      { night: parentId, runs: ids.map((id) => ({ sweepId: id, resultsDir: `/results/${id}` })) },
    ]);
    expect(outcomes.map((o) => o.result?.regressions)).toEqual([2, undefined, 0]);
    // the sweep left without a verdict counts, never as none
    const label = (await h.describe()).typedSearchAttributes.get(searchAttributeKeys.regression);
    expect(label).toBe('2,failed:1');
  });

  it('an ad-hoc run of every orientation leaves each sweep its own verdict', async () => {
    const sweeps = ['balanced', 'latency'].map((orientation) => sweep({}, { orientation, points: [1] }));
    const parentId = `all-${randomUUID().slice(0, 8)}`;
    await (await startAll(parentId, sweeps)).result();
    for (const s of sweeps) {
      expect(callsOf(s, 'recordHistory')).toHaveLength(1);
      expect(callsOf(s, 'storeHistory')).toHaveLength(0);
    }
    expect(calls.get(parentId)).toBeUndefined();
  });

  it('a parent cancel cancels the running child (its allocation released) and starts none of the rest', async () => {
    let started!: () => void;
    const pointStarted = new Promise<void>((resolve) => (started = resolve));
    const sweeps = ['balanced', 'latency', 'throughput'].map((orientation, i) =>
      sweep(
        i === 0
          ? {
              runPoint: async () => {
                started();
                // until the cancel reaches it (heartbeats by the activity interceptor carry it)
                await Context.current().cancelled;
              },
            }
          : {},
        { orientation, points: [1] },
      ),
    );
    const parent = await startAll(`all-${randomUUID().slice(0, 8)}`, sweeps);
    await pointStarted;
    await parent.cancel();
    const err = await parent.result().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expect((await parent.describe()).status.name).toBe('CANCELLED');
    const child = env.client.workflow.getHandle(sweeps[0]!.sweepId);
    expect((await child.describe()).status.name).toBe('CANCELLED');
    expect(callsOf(sweeps[0]!, 'release').map((i) => i.jobId)).toEqual(['100']);
    for (const s of sweeps.slice(1)) {
      await expect(env.client.workflow.getHandle(s.sweepId).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
    }
  });
});

describe('abort and cancel in any phase, recorded as what they are', () => {
  /** allocate as the real one behaves while queued: it waits, and a cancel ends it with CommandAbortedError after withdrawing */
  const queued: Script['allocate'] = async () => {
    await Context.current().cancelled.catch(() => undefined);
    throw new CommandAbortedError('allocation withdrawn: aborted while waiting for the grant', {
      context: { step: 'allocate' },
    });
  };

  it('abort while the allocation is queued acts now: the request withdrawn and released by name, the sweep aborted, nothing launched', async () => {
    const input = sweep({ allocate: queued });
    const { handle, result } = await run(input);
    await progressUntil(handle, (p) => p.phase === 'allocating');
    await handle.executeUpdate(abortUpdate, { args: [{ reason: 'operator' }] });
    const r = await result;
    expect(r.status).toBe('aborted');
    expect(r.allocations.map((a) => [a.ended, a.reason])).toEqual([['released', 'aborted: operator']]);
    expect(callsOf(input, 'release').map((i) => [i.jobId, i.jobName])).toEqual([
      [undefined, r.allocations[0]!.jobName],
    ]);
    expect(callsOf(input, 'launchServer')).toHaveLength(0);
    expect(r.points.every((p) => p.status === 'pending' && p.attempts === 0)).toBe(true);
    await keepFixture(input.sweepId, 'abort-while-queued');
  });

  it('a cancel of the workflow while allocating is a cancel: one allocation record, released, no failed attempt and no second attempt', async () => {
    const input = sweep({ allocate: queued });
    const { handle, result } = await run(input);
    await progressUntil(handle, (p) => p.phase === 'allocating');
    await handle.cancel();
    await expect(result).rejects.toBeInstanceOf(WorkflowFailedError);
    expect((await handle.describe()).status.name).toBe('CANCELLED');
    const p = await handle.query(progressQuery);
    expect(p.allocations.map((a) => a.ended)).toEqual(['released']);
    expect(callsOf(input, 'allocate')).toHaveLength(1);
  });

  it('a failed release by name after a failed allocate waits for the operator like any release; retryNow releases it and the sweep goes on', async () => {
    const input = sweep({
      allocate: (i, n) => {
        if (n === 1)
          throw new AllocationError('allocation not granted: salloc ended without a job', {
            kind: 'fatal',
            context: { step: 'allocate' },
          });
        return defaults.allocate(i);
      },
      release: (i, n) => {
        if (n === 1) throw scancelFails(i.jobId);
        return { ended: 'released', state: 'RUNNING' };
      },
    });
    const { handle, result } = await run(input);
    const waiting = await progressUntil(handle, (p) => p.phase === 'awaiting-operator');
    const jobName = waiting.allocations[0]!.jobName;
    expect(waiting.awaitingOperator!.reason).toContain(`the jobs named ${jobName}`);
    expect(waiting.awaitingOperator!.reason).toContain(`scancel --me --name=${jobName}`);
    await handle.executeUpdate(retryNowUpdate, { args: [{}] });
    const r = await result;
    expect(r.status).toBe('completed');
    expect(r.allocations.map((a) => a.ended)).toEqual(['allocation-failed', 'released']);
    expect(callsOf(input, 'release').map((i) => i.jobName)).toEqual([jobName, jobName, r.allocations[1]!.jobName]);
    await keepFixture(input.sweepId, 'release-by-name-waits-for-operator');
  });

  it('a job stuck COMPLETING past its patience is released as far as the sweep goes, its nodes named on the record', async () => {
    const stuck = 'job 100 still COMPLETING 10 min after scancel on node1,node2: check those nodes';
    const input = sweep(
      { release: () => ({ ended: 'released', state: 'COMPLETING', reason: stuck }) },
      { points: [1, 2], pointsPerAllocation: 1 },
    );
    const r = await (await run(input)).result;
    expect(r.status).toBe('completed');
    expect(r.allocations.map((a) => [a.ended, a.warnings])).toEqual([
      ['released', [stuck]],
      ['released', [expect.stringContaining('COMPLETING')]],
    ]);
  });
});

describe('a point that crashes its server', () => {
  it('every time (an engine crash at c=4): the point fails after maxPointAttempts with the server log tail in its record; the allocation is kept for the next points', async () => {
    const input = sweep(
      {
        runPoint: (i) => {
          if (i.concurrency === 4)
            throw new ServerLostError('server step infersweep-s1-r0 on node1 (rank 0) gone', {
              jobId: (i.deployment as Deployment).jobId,
              node: 'node1',
              step: 'point',
              logTail: 'srun: error: node1: task 0: Exited with exit code 1',
            });
          return defaults.runPoint(i);
        },
      },
      { points: [1, 2, 4, 8] },
    );
    const r = await (await run(input)).result;
    expect(r.status).toBe('completed');
    expect(r.points.map((p) => [p.concurrency, p.status, p.attempts])).toEqual([
      [1, 'done', 1],
      [2, 'done', 1],
      [4, 'failed', 2],
      [8, 'done', 1],
    ]);
    const c4 = r.points.find((p) => p.concurrency === 4)!;
    expect(c4.lastError).toContain('gone');
    expect(c4.lastError).toContain('Exited with exit code 1');
    // classified on each attempt: an engine crash, restarted here, then the point failed
    expect(c4.failures?.map((f) => [f.class, f.action])).toEqual([
      ['engine-crash', 'retry-here'],
      ['engine-crash', 'fail-point'],
    ]);
    // each crash is a strike against its node (two quarantine it: the worker's quarantine decides)
    expect(callsOf(input, 'implicateNodes').map((i) => [i.nodes, i.step, i.class])).toEqual([
      [['node1'], 'strike', 'engine-crash'],
      [['node1'], 'strike', 'engine-crash'],
    ]);
    expect(r.allocations.map((a) => [a.jobId, a.ended])).toEqual([['100', 'released']]);
    expect(callsOf(input, 'allocate')).toHaveLength(1);
    // a fresh server after each crash, on the same job
    expect(callsOf(input, 'launchServer').map((i) => (i.allocation as Allocation).jobId)).toEqual([
      '100',
      '100',
      '100',
    ]);
    await keepFixture(input.sweepId, 'server-lost-under-point');
  });
});

describe('replicates across allocations (the config’s replicates block)', () => {
  const fixedN = { points: 'all' as const, min: 3, max: 3, target: {}, independentAllocations: true };
  /** Each allocation on its own nodes (the mock's default gives every job the same two). */
  const ownNodes = (i: Record<string, unknown>) => ({
    ...(defaults.allocate(i) as Allocation),
    nodes: [`n${String(i.attempt)}a`, `n${String(i.attempt)}b`],
  });
  const replicateCalls = (input: SweepInput) =>
    callsOf(input, 'runPoint').map(
      (i) => `c${String(i.concurrency)}r${String(i.replicate ?? 1)}@${(i.deployment as Deployment).jobId}`,
    );

  it('min 3: every point measured on 3 distinct allocations in interleaved rounds, each avoiding the last one’s nodes', async () => {
    const input = sweep({ allocate: ownNodes }, { points: [1, 2], replicates: fixedN });
    const r = await (await run(input)).result;
    expect(r.status).toBe('completed');
    expect(replicateCalls(input)).toEqual(['c1r1@100', 'c2r1@100', 'c1r2@200', 'c2r2@200', 'c1r3@300', 'c2r3@300']);
    expect(r.replicates!.points.map((rp) => [rp.concurrency, rp.status, rp.replicates.map((x) => x.jobId)])).toEqual([
      [1, 'fixed-n', ['100', '200', '300']],
      [2, 'fixed-n', ['100', '200', '300']],
    ]);
    expect(callsOf(input, 'allocate').map((i) => i.avoidNodes)).toEqual([undefined, ['n1a', 'n1b'], ['n2a', 'n2b']]);
    expect(r.allocations.map((a) => a.ended)).toEqual(['released', 'released', 'released']);
  });

  it('sequential: a steady point stops at min, a noisy one replicates to max and says the target was not met', async () => {
    const noisy = [1000, 1300, 800, 1200, 900];
    const input = sweep(
      {
        runPoint: (i) => ({
          ...(defaults.runPoint(i) as PointSummary),
          totalThroughputPerGpu:
            i.concurrency === 1 ? 1000 + Number(i.replicate ?? 1) : noisy[Number(i.replicate ?? 1) - 1],
        }),
      },
      { points: [1, 2], replicates: { ...fixedN, max: 5, target: { totalThroughputPerGpu: 0.03 } } },
    );
    const r = await (await run(input)).result;
    const [steady, wild] = r.replicates!.points;
    expect([steady!.status, steady!.replicates.length]).toEqual(['target-met', 3]);
    expect([wild!.status, wild!.replicates.length]).toEqual(['max-reached', 5]);
    expect(wild!.note).toMatch(/^target not met within max 5: totalThroughputPerGpu/);
    expect(steady!.stats.totalThroughputPerGpu).toMatchObject({ n: 3, mean: 1002, level: 0.95 });
    expect(replicateCalls(input).slice(4)).toEqual(['c1r3@300', 'c2r3@300', 'c2r4@400', 'c2r5@500']);
  });

  it('a lost allocation mid-replicate: the replicate reruns on a fresh allocation, no settled replicate is measured again', async () => {
    const input = sweep(
      {
        allocate: ownNodes,
        runPoint: (i, n) => {
          if (n === 5)
            throw new AllocationLostError('allocation 300 is NODE_FAIL', {
              state: 'NODE_FAIL',
              reason: 'NodeDown',
              context: { jobId: '300' },
            });
          return defaults.runPoint(i);
        },
      },
      { points: [1, 2], replicates: fixedN },
    );
    const r = await (await run(input)).result;
    expect(replicateCalls(input)).toEqual([
      'c1r1@100',
      'c2r1@100',
      'c1r2@200',
      'c2r2@200',
      'c1r3@300',
      'c1r3@400',
      'c2r3@400',
    ]);
    expect(r.allocations.map((a) => a.ended)).toEqual(['released', 'released', 'NODE_FAIL', 'released']);
    expect(r.replicates!.points.map((rp) => rp.replicates.map((x) => x.jobId))).toEqual([
      ['100', '200', '400'],
      ['100', '200', '400'],
    ]);
  });

  it('continues as new in the middle of the rounds: the replicates carried over, none measured twice', async () => {
    const input = sweep({}, { points: [1, 2, 4], replicates: fixedN, historyEventLimit: 60 });
    const { handle, result } = await run(input);
    const r = await result;
    const first = env.client.workflow.getHandle(input.sweepId, handle.firstExecutionRunId);
    expect((await first.describe()).status.name).toBe('CONTINUED_AS_NEW');
    const measured = replicateCalls(input).map((c) => c.split('@')[0]);
    expect(measured).toHaveLength(9);
    expect(new Set(measured).size).toBe(9);
    expect(r.replicates!.points.every((rp) => rp.status === 'fixed-n' && rp.replicates.length === 3)).toBe(true);
  });

  it('a listed point only: the other points are measured once', async () => {
    const input = sweep({}, { points: [1, 2, 4], replicates: { ...fixedN, points: [2] } });
    const r = await (await run(input)).result;
    expect(replicateCalls(input)).toEqual(['c1r1@100', 'c2r1@100', 'c4r1@100', 'c2r2@200', 'c2r3@300']);
    expect(r.replicates!.points.map((rp) => rp.concurrency)).toEqual([2]);
  });
});

describe('every failed attempt gets a class, and the decision follows from it', () => {
  const gpuPlan = { plan: { inline: 'plan', slurm: { nodes: 2, gpusPerNode: 8 } } as unknown as SweepInput['plan'] };

  it('a CUDA OOM under a point fails it at once (no retry at that concurrency), classified; the allocation is kept', async () => {
    const input = sweep({
      runPoint: (i) => {
        if (i.concurrency === 2)
          throw new ServerLostError('server step infersweep-s1-r0 on node1 (rank 0) gone during the point', {
            jobId: (i.deployment as Deployment).jobId,
            node: 'node1',
            step: 'point:c=2',
            logTail: 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 GiB',
          });
        return defaults.runPoint(i);
      },
    });
    const r = await (await run(input)).result;
    expect(r.points.map((p) => [p.concurrency, p.status, p.attempts])).toEqual([
      [1, 'done', 1],
      [2, 'failed', 1],
      [4, 'done', 1],
    ]);
    expect(r.points[1]!.failures).toEqual([
      expect.objectContaining({ class: 'cuda-oom', rule: 'cuda-oom', action: 'fail-point', nodes: [], jobId: '100' }),
    ]);
    expect(callsOf(input, 'implicateNodes')).toHaveLength(0);
    expect(r.allocations.map((a) => [a.jobId, a.ended])).toEqual([['100', 'released']]);
  });

  it('NODE_FAIL mid-point: node health, the node quarantined, the point re-placed on a new allocation; the ledger books the lost time as a failed attempt and sums to held time x GPUs', async () => {
    const input = sweep(
      {
        runPoint: (i, n) => {
          if (i.concurrency === 2 && n === 2)
            throw new AllocationLostError('allocation 100 is NODE_FAIL (NodeDown)', {
              state: 'NODE_FAIL',
              reason: 'NodeDown',
              context: { jobId: '100', node: 'node2', step: 'point:c=2' },
            });
          return defaults.runPoint(i);
        },
      },
      gpuPlan,
    );
    const r = await (await run(input)).result;
    expect(r.points.map((p) => [p.concurrency, p.status, p.attempts])).toEqual([
      [1, 'done', 1],
      [2, 'done', 1],
      [4, 'done', 1],
    ]);
    expect(r.points[1]!.failures).toEqual([
      expect.objectContaining({
        class: 'node-health',
        rule: 'slurm-node-fail',
        action: 're-place',
        nodes: ['node2'],
        quarantined: ['node2'],
      }),
    ]);
    expect(callsOf(input, 'implicateNodes')).toEqual([
      expect.objectContaining({
        nodes: ['node2'],
        step: 'now',
        class: 'node-health',
        rule: 'slurm-node-fail',
        jobId: '100',
      }),
    ]);
    expect(r.allocations.map((a) => [a.ended, a.failureClass, a.gpus])).toEqual([
      ['NODE_FAIL', 'node-health', 16],
      ['released', undefined, 16],
    ]);
    const l = r.ledger!;
    const held = r.allocations.reduce(
      (s, a) => s + ((Date.parse(a.endedAt!) - Date.parse(a.grantedAt!)) / 1000) * a.gpus!,
      0,
    );
    expect(l.heldGpuSeconds).toBeCloseTo(held, 6);
    expect(ledgerTotal(l.sweep)).toBeCloseTo(held, 6);
    // every point has its entry, c=2's failed attempt included
    expect(Object.keys(l.points).sort()).toEqual(['1', '2', '4']);
    expect(l.open).toEqual({});
  });

  it('the quarantine leaves too few nodes: the sweep waits for an operator, saying so; retryNow allocates again', async () => {
    const input = sweep(
      {
        allocate: (i, n) => {
          if (n === 1)
            throw new QuarantineBlocksError(
              'the quarantine leaves 1 of 4 nodes of partition local (quarantined: node1, node2, node3); the topology needs 2: clear a node with infersweep nodes --clear NODE, then infersweep resume',
              { step: 'allocate', node: 'node1,node2,node3' },
            );
          return defaults.allocate(i);
        },
      },
      { points: [1] },
    );
    const { handle, result } = await run(input);
    const p = await progressUntil(handle, (q) => q.phase === 'awaiting-operator');
    expect(p.awaitingOperator?.reason).toMatch(/^the quarantine leaves 1 of 4 nodes .* infersweep nodes --clear NODE/);
    expect(p.allocations.map((a) => a.ended)).toEqual(['allocation-failed']);
    await handle.executeUpdate(retryNowUpdate, { args: [{}] });
    const r = await result;
    expect(r.points.map((x) => [x.concurrency, x.status])).toEqual([[1, 'done']]);
    expect(callsOf(input, 'allocate')).toHaveLength(2);
  });

  it('a "success" with zero output tokens is an invalid point, classified zero-output; the ledger books its time as a failed attempt, not measurement', async () => {
    const input = sweep(
      {
        // the activity takes real time (the workflow clock runs with it), so the ledger has time to book
        runPoint: async (i) => {
          await new Promise((r) => setTimeout(r, 50));
          return {
            ...(defaults.runPoint(i) as PointSummary),
            valid: false,
            reasons: ['zero_output_tokens: 12 successful requests returned 0 output tokens'],
          };
        },
      },
      { points: [1], ...gpuPlan },
    );
    const r = await (await run(input)).result;
    expect(r.points[0]).toMatchObject({ status: 'invalid', attempts: 1 });
    expect(r.points[0]!.failures).toEqual([
      expect.objectContaining({ class: 'zero-output', rule: 'zero-output-tokens', action: 'fail-point' }),
    ]);
    const booked = r.ledger!.points['1']!;
    expect(booked.failedAttempts).toBeGreaterThan(0);
    expect([booked.measurement, booked.warmup, booked.drain]).toEqual([0, 0, 0]);
    expect(r.ledger!.sweep.measurement).toBe(0);
  });
});
