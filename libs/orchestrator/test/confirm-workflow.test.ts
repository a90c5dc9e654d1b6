/**
 * The confirmation workflow's decisions with mocked activities (the real stack: apps/cli/test/
 * confirm-bisect.nightly.test.ts): a confirmed regression is bisected to the first bad image over the
 * candidates, a slowdown the run context does not carry is cleared, A and B alternate on one
 * allocation per comparison, every allocation is released, an A/B that cannot measure fails closed,
 * and a flagged sweep starts the confirmation and hands its outcome to the notification.
 *
 * Server and workers: ./unit-workflow-env.ts. The replay of each completed history checks the
 * workflow code is deterministic; a worker stopped mid-comparison hands the confirmation to another.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { Context } from '@temporalio/activity';
import { WorkflowFailedError } from '@temporalio/client';
import {
  confirmIdOf,
  type ChildSweepOutcome,
  type ConfirmInput,
  type ConfirmResult,
  type PointSummary,
  type SweepResult,
} from '@infersweep/sweep';
import { bundlerOptions, workflowsPath } from '@infersweep/orchestrator';
import type { Allocation, Deployment, SweepActivities } from '../src/activities/types';
import type { SweepRunInput } from '../src/workflows/run';
import { mockedWorker, unitSweepInput, unitWorkflowEnv } from './unit-workflow-env';

/** interactivity p50 (tok/s/user) of each image; c3 introduced a 20 % slowdown that c4 and cur keep */
const SPEED: Record<string, number> = { good: 100, c1: 100, c2: 101, c3: 80, c4: 80, cur: 79 };
const CANDIDATES = ['c1', 'c2', 'c3', 'c4'];

type Call = { verb: keyof SweepActivities; input: Record<string, unknown> };
const calls = new Map<string, Call[]>();
/** per workflow: the interactivity a point reports for an image (default SPEED with ±1 % deterministic jitter) */
const measure = new Map<string, (image: string, n: number) => number | undefined>();
let notified: unknown[] = [];
/** per workflow: awaited by the n-th runPoint before it measures (a point under way when its worker stops) */
const holds = new Map<string, (n: number) => Promise<void>>();

const idOf = (i: Record<string, unknown>): string =>
  String(i.sweepId ?? (i.planRef as { resultsDir?: string } | undefined)?.resultsDir ?? '').replace(/^\/results\//, '');
const imageOf = (planHash: string) => planHash.replace(/^img:/, '');

function activities(): SweepActivities {
  const log = (verb: keyof SweepActivities, raw: object) => {
    const input = raw as Record<string, unknown>;
    const id = idOf(input).split('/')[0]!;
    const l = calls.get(id) ?? [];
    l.push({ verb, input });
    calls.set(id, l);
    return l.filter((c) => c.verb === verb).length;
  };
  const acts: Partial<SweepActivities> = {
    prepareSweep: async (i) => (log('prepareSweep', i), []),
    importImage: async () => ({ note: 'none' }),
    allocate: async (i) => {
      const n = log('allocate', i);
      return {
        jobId: `${n}00`,
        jobName: i.jobName,
        nodes: ['node1'],
        headNode: 'node1',
        timeLimitMinutes: 60,
        grantedAt: '',
      } satisfies Allocation;
    },
    launchServer: async (i) => {
      log('launchServer', i);
      return {
        jobId: i.allocation.jobId,
        nodes: ['node1'],
        headNode: 'node1',
        serverIndex: i.serverIndex,
        steps: [],
        endpoints: ['http://x'],
        metricsEndpoints: ['http://x'],
        expectedEngines: null,
        logDir: '/l',
        launchedAt: '',
      } satisfies Deployment;
    },
    waitReady: async () => ({ seconds: 1 }),
    runPoint: async (i) => {
      const n = log('runPoint', i);
      const id = idOf(i as unknown as Record<string, unknown>);
      await holds.get(id.split('/')[0]!)?.(n);
      const image = imageOf(i.planHash);
      const f = measure.get(id) ?? ((img: string, k: number) => SPEED[img]! * (1 + 0.01 * Math.sin(k * 2.3)));
      const v = f(image, n);
      return {
        concurrency: i.concurrency,
        valid: v !== undefined,
        reasons: v === undefined ? ['client_saturated'] : [],
        resultPath: `${i.resultsDir}/c${i.concurrency}`,
        reused: false,
        ...(v === undefined ? {} : { interactivityP50: v }),
      } satisfies PointSummary;
    },
    captureLogs: async () => ({ files: [], tails: {} }),
    stopServer: async (i) => void log('stopServer', i),
    release: async (i) => (log('release', i), { ended: 'released', state: 'RUNNING' }),
    stageArm: async (i) => (log('stageArm', i), { planHash: `img:${i.image}`, resultsDir: i.resultsDir }),
    recordHistory: async (i) => (log('recordHistory', i), flagged(i.sweepId)),
    storeHistory: async (i) => (log('storeHistory', i), { store: '/results', points: 1 }),
    // a night of one sweep, flagged: the scheduled run confirms it
    judgeNight: async (i) => ({
      runs: i.runs.map((r) => ({ sweepId: r.sweepId, ...flagged(r.sweepId) })),
      missing: [],
    }),
    notifyConfirmation: async (i) => {
      notified.push(i);
      return 'command tee';
    },
  };
  return acts as SweepActivities;
}

let env: TestWorkflowEnvironment;
let worker: { stop(): Promise<void> };
const taskQueue = `unit-confirm-${randomUUID()}`;

beforeAll(async () => {
  env = await unitWorkflowEnv();
  worker = await mockedWorker(env, taskQueue, activities());
}, 120_000);

afterAll(async () => {
  await worker?.stop();
  await env?.teardown();
});

/** A verdict that flagged `sweepId` and asks for its A/B. */
function flagged(sweepId: string) {
  const {
    confirmId: _c,
    resultsRoot: _r,
    startupBudgetSeconds: _s,
    pointBudgetSeconds: _p,
    deploymentTag: _t,
    ...rest
  } = { ...request(`confirm-${sweepId}`), sweepId };
  return { regressions: 1, unmeasured: 0, label: '1', store: '/results', skipped: [], confirm: rest };
}

function request(confirmId: string, candidates = CANDIDATES): ConfirmInput {
  return {
    confirmId,
    sweepId: 'nightly-3',
    resultsRoot: '/results',
    good: {
      runId: 'nightly-2',
      image: 'good',
      planRef: { planHash: 'aaaaaaaaaaaaaaaa', resultsDir: '/results/nightly-2' },
    },
    current: {
      runId: 'nightly-3',
      image: 'cur',
      planRef: { planHash: 'bbbbbbbbbbbbbbbb', resultsDir: '/results/nightly-3' },
    },
    concurrency: 4,
    metric: 'interactivityP50',
    higherIsBetter: true,
    gate: 0.05,
    pairs: 4,
    level: 0.95,
    candidates,
    startupBudgetSeconds: 30,
    pointBudgetSeconds: 30,
    deploymentTag: 'unit.0a1b2c',
  };
}

async function confirmRun(input: ConfirmInput): Promise<ConfirmResult> {
  const h = await env.client.workflow.start('confirmWorkflow', {
    taskQueue,
    workflowId: input.confirmId,
    args: [input],
  });
  const r = (await h.result()) as ConfirmResult;
  // the completed history replays on the current workflow code: deterministic
  await Worker.runReplayHistory({ workflowsPath, bundlerOptions }, await h.fetchHistory(), input.confirmId);
  return r;
}

const verbs = (id: string, only: string[]) => (calls.get(id) ?? []).filter((c) => only.includes(c.verb));

describe('the confirmation workflow', () => {
  it('confirms a 20 % regression and bisects four candidates to the first bad image in two steps', async () => {
    const id = `c-${randomUUID().slice(0, 8)}`;
    const r = await confirmRun(request(id));
    expect(r.outcome).toBe('confirmed');
    expect(r.comparison.relativeUpper).toBeLessThan(-0.05);
    // candidates c1..c4 between good and cur: c2 (index 1) cleared, then c3 (index 2) confirmed
    expect(r.steps.map((s) => [s.step, s.b, s.outcome])).toEqual([
      ['confirm', 'cur', 'confirmed'],
      ['bisect-1', 'c2', 'cleared'],
      ['bisect-2', 'c3', 'confirmed'],
    ]);
    expect(r.culprit).toMatchObject({ image: 'c3', bisected: true });
    expect(r.culprit!.comparison.relativeEffect).toBeCloseTo(-0.2, 1);
    // one allocation per comparison, each released; A and B alternate on it, a server each
    expect(verbs(id, ['allocate']).length).toBe(3);
    expect(verbs(id, ['release']).map((c) => c.input.jobId)).toEqual(['100', '200', '300']);
    const first = verbs(id, ['runPoint']).slice(0, 8);
    expect(first.map((c) => imageOf(String(c.input.planHash)))).toEqual([
      'good',
      'cur',
      'good',
      'cur',
      'good',
      'cur',
      'good',
      'cur',
    ]);
    expect(new Set(first.map((c) => (c.input.deployment as Deployment).jobId))).toEqual(new Set(['100']));
    expect(verbs(id, ['launchServer']).length).toBe(verbs(id, ['stopServer']).length);
  }, 60_000);

  it('names the current image when every candidate is as fast as the good one', async () => {
    const id = `c-${randomUUID().slice(0, 8)}`;
    measure.set(id, (img, k) => (img === 'cur' ? 80 : 100) * (1 + 0.01 * Math.sin(k)));
    const r = await confirmRun(request(id));
    expect(r.steps.map((s) => s.b)).toEqual(['cur', 'c2', 'c3', 'c4']);
    expect(r.culprit).toMatchObject({ image: 'cur', bisected: true });
  }, 60_000);

  it('clears a slowdown the run context does not reproduce: no bisection, one allocation', async () => {
    const id = `c-${randomUUID().slice(0, 8)}`;
    // the flagged night was slow for the host; on the A/B's allocation both contexts run alike
    measure.set(id, (_img, k) => 100 * (1 + 0.02 * Math.sin(k * 1.7)));
    const r = await confirmRun(request(id));
    expect([r.outcome, r.culprit, r.steps.length]).toEqual(['cleared', undefined, 1]);
    expect(r.comparison.relativeLower).toBeLessThan(0.05);
    expect(verbs(id, ['allocate', 'release']).map((c) => c.verb)).toEqual(['allocate', 'release']);
  }, 60_000);

  it('fails closed when the A/B cannot measure (every point invalid), releasing its allocation', async () => {
    const id = `c-${randomUUID().slice(0, 8)}`;
    measure.set(id, () => undefined);
    const h = await env.client.workflow.start('confirmWorkflow', { taskQueue, workflowId: id, args: [request(id)] });
    const err = await h.result().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expect(String((err as WorkflowFailedError).cause?.message)).toMatch(/only 0 of 4 pairs measured interactivityP50/);
    expect(verbs(id, ['release']).length).toBe(1);
  }, 60_000);
});

describe('a worker restart', () => {
  it('mid-comparison: another worker resumes the confirmation; nothing done is redone but the point under way', async () => {
    const id = `c-${randomUUID().slice(0, 8)}`;
    const queue = `unit-confirm-restart-${randomUUID()}`;
    let underWay!: () => void;
    const third = new Promise<void>((r) => (underWay = r));
    // the third point waits until its worker's shutdown cancels it
    holds.set(id, async (n) => {
      if (n !== 3) return;
      underWay();
      await Context.current().cancelled;
    });
    const first = await mockedWorker(env, queue, activities());
    const h = await env.client.workflow.start('confirmWorkflow', {
      taskQueue: queue,
      workflowId: id,
      args: [request(id)],
    });
    await third;
    await first.stop();
    const second = await mockedWorker(env, queue, activities());
    try {
      const r = (await h.result()) as ConfirmResult;
      expect([r.outcome, r.culprit?.image]).toEqual(['confirmed', 'c3']);
    } finally {
      await second.stop();
    }
    // 3 comparisons × 4 pairs × 2 arms, the interrupted point once more; one allocation per comparison
    expect(verbs(id, ['runPoint']).length).toBe(3 * 8 + 1);
    expect(verbs(id, ['allocate']).length).toBe(3);
    expect(verbs(id, ['release']).length).toBe(3);
  }, 120_000);
});

describe('a flagged sweep', () => {
  it('starts the confirmation as a child and notifies its outcome with the first bad image', async () => {
    notified = [];
    const sweepId = `s-${randomUUID().slice(0, 8)}`;
    const input = { ...unitSweepInput(sweepId), orientation: 'latency', image: 'cur', points: [4] };
    const h = await env.client.workflow.start('sweepWorkflow', {
      taskQueue,
      workflowId: sweepId,
      args: [input as SweepRunInput],
    });
    const r = (await h.result()) as SweepResult;
    expect(r.confirmation).toEqual({ confirmId: confirmIdOf(sweepId), outcome: 'confirmed', culprit: 'c3' });
    expect(notified).toHaveLength(1);
    expect(notified[0]).toMatchObject({ sweepId, result: { outcome: 'confirmed', culprit: { image: 'c3' } } });
    // the child ran under its own id: its allocations are named after it, not the sweep
    expect(verbs(confirmIdOf(sweepId), ['allocate']).length).toBe(3);
  }, 60_000);

  it('a scheduled night: the run judges its sweep, then confirms the flagged one and notifies the culprit', async () => {
    notified = [];
    const sweepId = `s-${randomUUID().slice(0, 8)}`;
    const input = { ...unitSweepInput(sweepId), orientation: 'latency', image: 'cur', points: [4] };
    const h = await env.client.workflow.start('sweepAllWorkflow', {
      taskQueue,
      workflowId: `night-${sweepId}`,
      args: [{ sweeps: [input], maxConcurrentSweeps: 1, schedule: 'infersweep-nightly' }],
    });
    const [outcome] = (await h.result()) as ChildSweepOutcome[];
    expect(verbs(sweepId, ['storeHistory', 'recordHistory']).map((c) => c.verb)).toEqual(['storeHistory']);
    expect(outcome!.result).toMatchObject({
      regressions: 1,
      confirmation: { confirmId: confirmIdOf(sweepId), outcome: 'confirmed', culprit: 'c3' },
    });
    expect(notified).toEqual([
      expect.objectContaining({ sweepId, result: expect.objectContaining({ outcome: 'confirmed' }) }),
    ]);
    expect(verbs(confirmIdOf(sweepId), ['allocate']).length).toBe(3);
    await Worker.runReplayHistory({ workflowsPath, bundlerOptions }, await h.fetchHistory(), `night-${sweepId}`);
  }, 60_000);
});
