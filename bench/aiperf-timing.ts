/**
 * aiperf's side of the timing bench: a plain streaming `aiperf profile` (PyPI 0.13, `--export-level raw`)
 * against the tick server; every response chunk aiperf recorded carries aiperf's receive time (perf_ns,
 * CLOCK_MONOTONIC) and the server's send time in its text (bench/lib/timing.ts).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { AIPERF_ENV, parseTimes } from '@infersweep/agentx';
import { aiperfBinary, aiperfTokenizer } from '@infersweep/testkit/aiperf-env';
import { aiperfRawErrors } from './lib/timing';

export const aiperfAvailable = (): boolean => existsSync(aiperfBinary) && existsSync(aiperfTokenizer);

export async function aiperfTimingErrors(i: {
  url: string;
  concurrency: number;
  osl: number;
  durationSeconds: number;
  outDir: string;
}): Promise<{ errorsMs: number[]; firstLastMs: number[]; eventsPerSecond: number; cpuSeconds: number | null }> {
  mkdirSync(i.outDir, { recursive: true });
  const argv = [
    'profile',
    '--model',
    'tick',
    '--url',
    i.url,
    '--endpoint-type',
    'chat',
    '--endpoint',
    '/v1/chat/completions',
    '--streaming',
    '--tokenizer',
    aiperfTokenizer,
    '--concurrency',
    String(i.concurrency),
    '--benchmark-duration',
    String(i.durationSeconds),
    '--synthetic-input-tokens-mean',
    '16',
    '--synthetic-input-tokens-stddev',
    '0',
    '--output-tokens-mean',
    String(i.osl),
    '--output-tokens-stddev',
    '0',
    '--extra-inputs',
    'ignore_eos:true',
    '--use-server-token-count',
    '--export-level',
    'raw',
    '--output-artifact-dir',
    i.outDir,
    '--ui-type',
    'none',
    '--no-gpu-telemetry',
  ];
  let log = '';
  const code = await new Promise<number | null>((resolve) => {
    const p = spawn('bash', ['-c', '"$@"; rc=$?; times >&2; exit $rc', 'aiperf-wrapper', aiperfBinary, ...argv], {
      env: { ...process.env, ...AIPERF_ENV },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    p.stdout.on('data', (d: Buffer) => (log = (log + d.toString()).slice(-20_000)));
    p.stderr.on('data', (d: Buffer) => (log = (log + d.toString()).slice(-20_000)));
    p.on('exit', resolve);
  });
  if (code !== 0) throw new Error(`aiperf exited ${code}: ${log.slice(-3000)}`);
  const raw = findFile(i.outDir, 'profile_export_raw.jsonl');
  if (!raw) throw new Error(`aiperf wrote no profile_export_raw.jsonl under ${i.outDir}`);
  const r = aiperfRawErrors(readFileSync(raw, 'utf8'));
  return {
    errorsMs: r.errorsMs,
    firstLastMs: r.firstLastMs,
    eventsPerSecond: r.events / Math.max(1e-9, r.spanSeconds),
    cpuSeconds: parseTimes(log),
  };
}

function findFile(dir: string, name: string): string | null {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isFile() && e.name === name) return p;
    if (e.isDirectory()) {
      const f = findFile(p, name);
      if (f) return f;
    }
  }
  return null;
}
