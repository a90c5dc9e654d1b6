/**
 * What the benches share: child processes (so each client's CPU and RSS are its own), synthetic corpora,
 * the identity block of a bench point, and formatting.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { FILLER_WORDS, type WekaTrace } from '@infersweep/agentx';
import type { ReaderInput, ReaderSummary } from './reader-child';
export { numList, options } from './lib/args';

const run = promisify(execFile);
export const repoDir = join(__dirname, '..');

export const identity = {
  sweepId: 'bench',
  orientation: 'bench',
  topology: 'sim',
  image: 'llm-d-inference-sim:v0.10.2',
  model: 'agentx-sim',
  engineArgsFingerprint: 'bench',
  jobId: null,
  nodes: ['localhost'],
  attempt: 0,
  deploymentPolicy: 'shared-server',
};

/** What every bench row gives a client for `concurrency` sessions against one simulator (its one endpoint). */
export function simPoint(sim: { url: string }, concurrency: number) {
  return {
    concurrency,
    endpoints: [sim.url],
    metricsEndpoints: [sim.url],
    servedModel: 'agentx-sim',
    gpuCount: 1,
    identity,
  };
}

/** What bench/agentx-child.ts prints. */
export interface ChildSummary {
  wallSeconds: number;
  cpuSeconds: number;
  windowCpuSeconds: number | null;
  windowWallSeconds: number | null;
  windowTokens: number;
  hrOffsetMs: number;
  maxRssBytes: number;
  outputTokens: number;
  requests: number;
  profiledRequests: number;
  errors: number;
  maxIsl: number;
  ttftMean: number | null;
  itlMean: number | null;
  sessions: number | null;
  busyLanes: number | null;
  loopP99: number | null;
  cpuFraction: number | null;
  reasons: string[];
}

async function child<T>(script: string, arg: unknown, timeoutMs: number): Promise<T> {
  const { stdout } = await run(
    process.execPath,
    [join(repoDir, 'node_modules', 'tsx', 'dist', 'cli.mjs'), join(__dirname, script), JSON.stringify(arg)],
    {
      cwd: repoDir,
      maxBuffer: 256 * 1024 * 1024,
      timeout: timeoutMs,
    },
  );
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as T;
}

/** One point of infersweep's AgentX client (runPoint) in its own process; `onProfiling` fires when its profile window opens. */
export function runClient(
  input: unknown,
  opts: { timeoutMs?: number; onProfiling?: () => void } = {},
): Promise<ChildSummary> {
  return new Promise((resolve, reject) => {
    const p = spawn(
      process.execPath,
      [
        join(repoDir, 'node_modules', 'tsx', 'dist', 'cli.mjs'),
        join(__dirname, 'agentx-child.ts'),
        JSON.stringify(input),
      ],
      {
        cwd: repoDir,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    const timer = setTimeout(() => p.kill('SIGKILL'), opts.timeoutMs ?? 600_000);
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => {
      err = (err + d.toString()).slice(-8000);
      if (opts.onProfiling && err.includes('agentx-child: profiling')) {
        const f = opts.onProfiling;
        opts.onProfiling = undefined;
        f();
      }
    });
    p.on('error', reject);
    p.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (code !== 0) return reject(new Error(`agentx-child exited ${code ?? signal}: ${err.slice(-3000)}`));
      try {
        resolve(JSON.parse(out.trim().split('\n').at(-1)!) as ChildSummary);
      } catch (e) {
        reject(
          new Error(
            `agentx-child printed no summary (${(e as Error).message}): ${out.slice(-1000)} ${err.slice(-2000)}`,
          ),
        );
      }
    });
  });
}
/** One bare or raw reference reader in its own process. */
export const runReader = (input: ReaderInput, timeoutMs = 300_000): Promise<ReaderSummary> =>
  child<ReaderSummary>('reader-child.ts', input, timeoutMs);

export function writeCorpus(traces: WekaTrace[], prefix = 'agentx-bench-traces-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  for (const t of traces) writeFileSync(join(dir, `${t.id}.json`), JSON.stringify(t));
  return dir;
}

/**
 * Uniform traces: every request has `isl` prompt tokens (one shared prefix per trace) and `osl` output
 * tokens, zero think time; so the client's requests match the reference readers' fixed request.
 */
export function uniformCorpus(opts: {
  traces: number;
  turns: number;
  isl: number;
  osl: number;
  blockSize?: number;
}): string {
  const bs = opts.blockSize ?? 64;
  const traces: WekaTrace[] = [];
  for (let k = 0; k < opts.traces; k++) {
    const ids = Array.from({ length: Math.ceil(opts.isl / bs) }, (_, i) => k * 100_000 + i);
    const requests: WekaTrace['requests'] = Array.from({ length: opts.turns }, (_, t) => ({
      t,
      type: 'n' as const,
      model: 'm',
      in: opts.isl,
      out: opts.osl,
      hash_ids: ids,
      input_types: [],
      output_types: [],
      stop: 'tool_use',
      api_time: 0,
      think_time: 0,
    }));
    traces.push({
      id: `uniform-${k}`,
      models: ['m'],
      block_size: bs,
      hash_id_scope: 'local',
      tool_tokens: 0,
      system_tokens: 0,
      requests,
      totals: null,
    });
  }
  return writeCorpus(traces, 'agentx-bench-uniform-');
}

/** The reference readers' request: `isl` filler words (one token each for the simulator), `osl` tokens out. */
export function fixedBody(model: string, isl: number, osl: number): string {
  const words = Array.from({ length: isl }, (_, i) => FILLER_WORDS[i % FILLER_WORDS.length]).join(' ');
  return JSON.stringify({
    model,
    stream: true,
    stream_options: { include_usage: true },
    ignore_eos: true,
    max_tokens: osl,
    messages: [{ role: 'user', content: words }],
  });
}

export const fmt = (x: number | null | undefined, d = 0): string =>
  x === null || x === undefined || !Number.isFinite(x) ? 'n/a' : x.toFixed(d);
export const mib = (b: number): string => `${(b / 2 ** 20).toFixed(0)} MiB`;

/**
 * Long agentic contexts: `traces` traces of `turns` root requests each, the first `contextTokens` long and
 * every later turn `step` tokens longer on a shared prefix (block-exact, so the client's block cache and a
 * server's prefix cache see a growing history), `osl` output tokens, zero think time.
 */
export function growingCorpus(opts: {
  traces: number;
  turns: number;
  contextTokens: number;
  step: number;
  osl: number;
}): string {
  const bs = 64;
  const traces: WekaTrace[] = [];
  for (let k = 0; k < opts.traces; k++) {
    const requests: WekaTrace['requests'] = [];
    let nextId = 1;
    const full: number[] = [];
    for (let i = 0; i < opts.turns; i++) {
      const tokens = opts.contextTokens + i * opts.step + k;
      while (full.length < Math.floor(tokens / bs)) full.push(nextId++);
      const ids = tokens % bs ? [...full, nextId++] : [...full];
      requests.push({
        t: i,
        type: 'n',
        model: 'm',
        in: tokens,
        out: opts.osl,
        hash_ids: ids,
        input_types: [],
        output_types: [],
        stop: 'tool_use',
        api_time: 0.1,
        think_time: 0,
      });
    }
    traces.push({
      id: `long-${k}`,
      models: ['m'],
      block_size: bs,
      hash_id_scope: 'local',
      tool_tokens: 2000,
      system_tokens: 4000,
      requests,
      totals: null,
    });
  }
  return writeCorpus(traces, 'agentx-bench-long-');
}

/** The RunPointInput of a bench point against one local server (its /metrics too unless `metrics` is false). */
export function pointInput(o: {
  concurrency: number;
  url: string;
  settings: Record<string, unknown>;
  outDir: string;
  model?: string;
  metrics?: boolean;
}) {
  return {
    concurrency: o.concurrency,
    endpoints: [o.url],
    metricsEndpoints: o.metrics === false ? [] : [o.url],
    servedModel: o.model ?? 'agentx-sim',
    gpuCount: 1,
    identity,
    settings: o.settings,
    outDir: o.outDir,
  };
}

/** The machine's state when a bench starts (it is shared: absolute numbers move with its load). */
export function loadLine(): string {
  const [a, b, c] = loadavg();
  return `conditions: ${cpus().length} cores, load average ${a!.toFixed(1)} / ${b!.toFixed(1)} / ${c!.toFixed(1)} (1/5/15 min), node ${process.version}`;
}
