/**
 * Integration harness for the CLI: the real sweep workflow on the real Temporal dev server, run
 * by a worker in this process whose activities are fakes (no Slurm): they heartbeat progress like
 * runPoint does, write point records like libs/agentx does, and hold a point until the test lets
 * it finish. The CLI runs as a subprocess (bin/infersweep), so exit codes and output are real.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { heartbeat, sleep as activitySleep } from '@temporalio/activity';
import { NativeConnection, Worker } from '@temporalio/worker';
import type { Client } from '@temporalio/client';
import { planSweep } from '@infersweep/topology';
import { taskQueueFor, type PointSummary, type SweepInput } from '@infersweep/sweep';
import { buildSweepInput, connectClient, temporalTarget } from '@infersweep/worker';
import type { SweepActivities } from '@infersweep/worker';
import { bundlerOptions, workflowsPath } from '../../worker/src/bundle';
import { loadSweepConfig } from '../src/config-file';
import { pointRecord } from './fixtures/sweep-results';
import { repoRoot } from '../../../test/stack-env';

export const target = temporalTarget();
export const BIN = join(repoRoot, 'bin', 'infersweep');

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run `infersweep …` (plain output: stdout is a pipe). */
export function cli(args: string[], env: Record<string, string> = {}, timeoutMs = 120_000): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(BIN, args, { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`infersweep ${args.join(' ')} did not finish in ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
  });
}

/** Poll `fn` until it returns a value (not undefined) or the deadline passes. */
export async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 60_000, everyMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastErr: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (e) {
      lastErr = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${lastErr ? `: ${(lastErr as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Which points come out invalid, and which are held until released. */
export interface FakeBehaviour {
  invalid?: number[];
  /** concurrency → release function is stored in `gates` */
  hold?: number[];
}

export class Gates {
  private readonly waiting = new Map<number, () => void>();
  private readonly opened = new Set<number>();
  open(c: number): void {
    this.opened.add(c);
    this.waiting.get(c)?.();
  }
  isOpen(c: number): boolean {
    return this.opened.has(c);
  }
  wait(c: number): Promise<void> {
    if (this.opened.has(c)) return Promise.resolve();
    return new Promise((r) => this.waiting.set(c, r));
  }
}

/** Fake activities with the production surface (SweepActivities). */
export function fakeActivities(b: FakeBehaviour, gates: Gates): SweepActivities {
  return {
    async prepareSweep({ plan, resultsDir }) {
      mkdirSync(join(resultsDir, 'points'), { recursive: true });
      writeFileSync(join(resultsDir, 'plan.json'), JSON.stringify(plan));
      return [];
    },
    async importImage() {
      return { note: 'fake: no image' };
    },
    async allocate({ jobName, attempt }) {
      return { jobId: `90${attempt}`, jobName, nodes: ['node1', 'node2'], headNode: 'node1', timeLimitMinutes: 60, grantedAt: new Date().toISOString() };
    },
    async launchServer({ allocation, serverIndex, resultsDir }) {
      return { jobId: allocation.jobId, nodes: allocation.nodes, headNode: 'node1', serverIndex, steps: [], endpoints: ['http://127.0.0.1:1'], metricsEndpoints: [], expectedEngines: null, logDir: join(resultsDir, 'logs'), launchedAt: new Date().toISOString() };
    },
    async waitReady() {
      return { seconds: 0 };
    },
    async runPoint(req) {
      const c = req.concurrency;
      let completed = 0;
      const held = b.hold?.includes(c) ?? false;
      const done = held ? gates.wait(c) : Promise.resolve();
      let finished = !held;
      void done.then(() => (finished = true));
      do {
        completed += c;
        heartbeat({ phase: 'profiling', completed, inFlight: c, etaSeconds: finished ? 0 : 600, concurrency: c });
        await activitySleep(200);
      } while (!finished);
      const valid = !(b.invalid ?? []).includes(c);
      const file = join(req.resultsDir, 'points', `c${c}.json`);
      mkdirSync(join(req.resultsDir, 'points'), { recursive: true });
      writeFileSync(file, JSON.stringify(pointRecord(req.sweepId, 'balanced', { concurrency: c, valid, tputPerGpu: 100 + 10 * c, interactivity: 200 / c, reasons: ['fake: error rate 0.5 > 0.1'] }, req.deployment.jobId)));
      const s: PointSummary = { concurrency: c, valid, reasons: valid ? [] : ['fake: error rate 0.5 > 0.1'], resultPath: file, reused: false, jobId: req.deployment.jobId, attempt: req.attempt, totalThroughputPerGpu: 100 + 10 * c, interactivityP50: 200 / c };
      return s;
    },
    async captureLogs({ destDir }) {
      mkdirSync(destDir, { recursive: true });
      const f = join(destDir, 'rank0-node1.log');
      writeFileSync(f, 'fake server log\n');
      return { files: [f], tails: { node1: 'fake server log' } };
    },
    async stopServer() {},
    async release() {
      return { ended: 'released', state: 'COMPLETED' };
    },
  };
}

/** A cluster name no one else uses: its task queue is polled only by our fake worker. */
export function testCluster(): string {
  return `clitest-${randomUUID().slice(0, 8)}`;
}

export async function startFakeWorker(cluster: string, b: FakeBehaviour, gates: Gates): Promise<{ stop(): Promise<void> }> {
  const connection = await NativeConnection.connect({ address: target.address });
  const worker = await Worker.create({
    connection,
    namespace: target.namespace,
    taskQueue: taskQueueFor(cluster),
    workflowsPath,
    bundlerOptions,
    activities: fakeActivities(b, gates),
  });
  const running = worker.run();
  return {
    stop: async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running.catch(() => undefined);
      await connection.close();
    },
  };
}

export const resultsRoot = (): string => mkdtempSync(join(tmpdir(), 'infersweep-cli-int-'));

/** A sweep input from the shipped config, re-targeted at a test cluster (task queue + search attribute). */
export function fakeInput(cluster: string, points: number[], root: string, label = randomUUID().slice(0, 8)): SweepInput {
  const loaded = loadSweepConfig({ clusters: ['local'] });
  const plan = planSweep(loaded.config, { orientation: 'balanced', cluster: 'local', points, source: loaded.source });
  return buildSweepInput({ ...plan, cluster }, { configName: 'clitest', configHash: 'test', label, resultsRoot: root, operatorTimeout: '10 minutes' });
}

export async function temporalClient(): Promise<Client> {
  return connectClient(target);
}
