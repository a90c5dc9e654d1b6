/**
 * The embedded default: with no TEMPORAL_ADDRESS the CLI talks to the local dev server (starting
 * the local stack on demand) and, when no worker polls the cluster's task queue, runs a worker
 * in-process for as long as it watches the sweep.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { DefaultLogger, Runtime, type LogEntry } from '@temporalio/worker';
import { createSweepWorker, dataDir, temporalTarget } from '@infersweep/orchestrator';
import { repoRoot, taskQueueFor } from '@infersweep/core';
import { activePollers, openSession, type Session } from './temporal';

export interface EmbeddedWorker {
  taskQueue: string;
  logFile: string;
  /** graceful shutdown: running activities get up to the worker's grace time */
  stop(): Promise<void>;
  /** settles when the worker stops (rejects if it crashed) */
  done: Promise<void>;
}

let runtimeLog: string | undefined;

/** Route the Temporal runtime's logs to a file (the terminal belongs to the progress view). */
function installQuietRuntime(): string {
  if (runtimeLog) return runtimeLog;
  const dir = join(dataDir, 'logs');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `cli-worker-${new Date().toISOString().replace(/[:.]/g, '-')}-${process.pid}.log`);
  try {
    Runtime.install({
      logger: new DefaultLogger('INFO', (e: LogEntry) => {
        appendFileSync(
          file,
          `${new Date(Number(e.timestampNanos / 1_000_000n)).toISOString()} ${e.level} ${e.message}${e.meta ? ` ${JSON.stringify(e.meta)}` : ''}\n`,
        );
      }),
    });
  } catch {
    // already installed in this process (tests): keep that runtime
  }
  runtimeLog = file;
  return file;
}

/** Start an in-process worker for `cluster` unless a worker already polls its task queue. */
export async function ensureWorker(
  s: Session,
  cluster: string,
  say: (line: string) => void,
): Promise<EmbeddedWorker | null> {
  const taskQueue = taskQueueFor(cluster);
  const pollers = await activePollers(s.client, s.target.namespace, cluster);
  if (pollers > 0) {
    say(`worker: ${pollers} worker(s) already poll ${taskQueue}; not starting one in-process`);
    return null;
  }
  if (!s.target.embedded) {
    say(
      `WARNING: no worker polls ${taskQueue} on ${s.target.address}; the sweep waits until one is deployed (TEMPORAL_ADDRESS is set, so no in-process worker is started)`,
    );
    return null;
  }
  const logFile = installQuietRuntime();
  say(`worker: none polls ${taskQueue}; starting one in this process (logs: ${logFile})`);
  const { worker, connection } = await createSweepWorker({
    cluster,
    target: s.target,
    identity: `infersweep-cli-${process.pid}`,
  });
  const done = worker.run().finally(() => connection.close().catch(() => undefined));
  return {
    taskQueue,
    logFile,
    done,
    stop: async () => {
      try {
        worker.shutdown();
      } catch {
        // not running any more
      }
      await done.catch(() => undefined);
    },
  };
}

/**
 * Connect to Temporal; for the embedded default bring the local stack up first when the dev
 * server does not answer (scripts/stack.sh up is idempotent).
 */
export async function openSessionOrStartStack(say: (line: string) => void): Promise<Session> {
  try {
    return await openSession();
  } catch (e) {
    if (!temporalTarget().embedded) throw e;
    say('Temporal does not answer; starting the local stack (scripts/stack.sh up)…');
    const r = spawnSync('bash', [join(repoRoot, 'scripts/stack.sh'), 'up'], {
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    if (r.status !== 0) throw new Error(`scripts/stack.sh up failed (exit ${r.status}); see .infersweep/stack/log/`);
    return openSession();
  }
}
