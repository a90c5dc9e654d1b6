import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { simBinary } from './stack';

/** A private llm-d-inference-sim on a free loopback port (tests and the bench start their own). */
export interface Sim {
  url: string;
  port: number;
  proc: ChildProcess;
  stop(): Promise<void>;
  log(): string;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

export async function startSim(opts: {
  ttft?: string;
  itl?: string;
  maxNumSeqs?: number;
  maxModelLen?: number;
  model?: string;
  extra?: string[];
  port?: number;
}): Promise<Sim> {
  const port = opts.port ?? (await freePort());
  const model = opts.model ?? 'agentx-sim';
  const args = [
    '--port',
    String(port),
    '--model',
    model,
    '--force-dummy-tokenizer',
    '--mode',
    'random',
    '--seed',
    '42',
    '--time-to-first-token',
    opts.ttft ?? '50ms',
    '--inter-token-latency',
    opts.itl ?? '10ms',
    '--time-factor-under-load',
    '1.0',
    '--max-num-seqs',
    String(opts.maxNumSeqs ?? 256),
    '--max-waiting-queue-length',
    '256',
    '--max-model-len',
    String(opts.maxModelLen ?? 32768),
    '--max-request-body-size-mb',
    '64',
    '--zmq-endpoint=',
    ...(opts.extra ?? []),
  ];
  const proc = spawn(simBinary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout?.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-20000)));
  proc.stderr?.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-20000)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 15_000;
  // readiness: poll /health until 200 (the process either comes up or exits; bounded)
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`simulator exited ${proc.exitCode}: ${out}`);
    try {
      const r = await fetch(`${url}/health`, { signal: AbortSignal.timeout(1000) });
      if (r.status === 200) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`simulator not ready on ${url}: ${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    port,
    proc,
    log: () => out,
    stop: () =>
      new Promise<void>((resolve) => {
        if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
        proc.once('exit', () => resolve());
        proc.kill('SIGTERM');
        setTimeout(() => proc.kill('SIGKILL'), 3000).unref();
      }),
  };
}
