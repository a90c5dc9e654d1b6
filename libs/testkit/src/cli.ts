/**
 * The CLI-spawning helpers of the CLI's tests in apps/cli/test (and of the production-stack
 * tests in test/production/harness.ts): the CLI runs as a subprocess
 * (bin/infersweep), so exit codes and output are real.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { repoRoot } from './stack';
import { until } from './wait';
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';

export const BIN = join(repoRoot, 'bin', 'infersweep');

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run `infersweep …` (plain output: stdout is a pipe) with this process's environment plus `env`. */
export function cli(args: string[], env: Record<string, string> = {}, timeoutMs = 120_000): Promise<CliRun> {
  return runCli(args, { env: { ...process.env, ...env }, timeoutMs });
}

/**
 * Run `infersweep …` with exactly `env` (a test can leave a variable out). Asynchronous: a CLI
 * spawned synchronously blocks the event loop, which starves vitest's worker RPC on a busy host.
 */
export function runCli(
  args: string[],
  opts: { env: NodeJS.ProcessEnv; timeoutMs?: number; cwd?: string },
): Promise<CliRun> {
  const timeoutMs = opts.timeoutMs ?? 120_000;
  return new Promise((resolve, reject) => {
    const child = spawn(BIN, args, { cwd: opts.cwd ?? repoRoot, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(
          `infersweep ${args.join(' ')} did not finish in ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`,
        ),
      );
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
  });
}

/** `infersweep schedule create NAME` of `config`'s latency orientation on the local cluster, one point, nightly at 02:00. */
export function createLatencySchedule(name: string, config: string, taskQueue: string): Promise<CliRun> {
  return cli([
    'schedule',
    'create',
    name,
    '--cron',
    '0 2 * * *',
    '--config',
    config,
    '--orientation',
    'latency',
    '--cluster',
    'local',
    '--points',
    '1',
    '--task-queue',
    taskQueue,
  ]);
}

/**
 * A cluster name no one else uses. A sweep input re-targeted at it (plan.cluster) goes to its own
 * task queue (taskQueueFor), which only the test's worker polls; `resume` restarts it there too.
 */
export function testCluster(): string {
  return `clitest-${randomUUID().slice(0, 8)}`;
}

/**
 * The run `schedule trigger <name>` started: its sweepAllWorkflow. Its child sweeps' ids begin with the run's id
 * (libs/core/src/names.ts childSweepId), so the id prefix alone may list a child first once one has started.
 */
export function scheduledRun(client: Client, name: string): Promise<WorkflowExecutionInfo> {
  const query = `WorkflowId STARTS_WITH 'infersweep-sched-${name}' AND WorkflowType = 'sweepAllWorkflow'`;
  return until(
    'the triggered run',
    async () => {
      for await (const w of client.workflow.list({ query })) return w;
      return undefined;
    },
    60_000,
  );
}
