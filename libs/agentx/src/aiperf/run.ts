import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { agentxSettingsSchema, defaultPublicDataset } from '@infersweep/topology';
import { shellJoin, tail } from '@infersweep/core';
import { loadTraces } from '../trace/loader';
import { PointAbortedError } from '../errors';
import { writeFileAtomic } from '../io';
import { identitySchema, type PointResult } from '../result';
import { snapshot, type RunPointInput } from '../point';
import { pointDcgmSampler } from '../server/dcgm-sampler';
import { AIPERF_ENV, buildAiperfArgv } from './argv';
import { aiperfRecord, type AiperfRunContext } from './record';
import { localAiperfRunner, type AiperfProcessStats, type AiperfRunOutcome, type AiperfRunner } from './runner';

export interface RunAiperfInput extends Omit<RunPointInput, 'outDir'> {
  /** Required: the argv, logs and aiperf artifacts live here. */
  outDir: string;
  /** Local Weka traces (file/dir) instead of the pinned public loader (offline runs). */
  traceFile?: string;
  /** Extra environment for the aiperf process. */
  env?: Record<string, string>;
  /** `--max-context-length`: the served context (the engine's --max-model-len), as InferenceX passes it. */
  maxContextLength?: number;
  /**
   * The served model's tokenizer (the config's `model.tokenizer`; under the local-vllm profile the generated model's
   * directory): aiperf builds each prompt block with it, so the engine sees the token counts the traces ask for.
   * `agentx.aiperf.tokenizer` overrides it; without either, the served name (InferenceX: `--tokenizer $MODEL`).
   */
  tokenizer?: string;
  /** The tokenizer directories trusted to run their own code (the worker's trustRemoteCodeTokenizers); default none. */
  trustRemoteCodeTokenizers?: readonly string[];
}

/** The tokenizer aiperf loads: `agentx.aiperf.tokenizer`, else the model's tokenizer, else the served model name. */
export function aiperfTokenizer(
  settings: { aiperf: { tokenizer?: string | undefined } },
  tokenizer: string | undefined,
  model: string,
): string {
  return settings.aiperf.tokenizer ?? tokenizer ?? model;
}

export interface RunAiperfHooks {
  signal?: AbortSignal;
  onLog?(line: string): void;
  /** Where aiperf runs (default: this host). */
  runner?: AiperfRunner;
  /** The most points the worker ran at once during this run (client-process.ts enterPoint), for the record. */
  concurrentPointsMax?(): number;
}

/** The context of one run and its argv (written verbatim to benchmark_command.txt before execution). */
async function prepare(input: RunAiperfInput, runner: AiperfRunner): Promise<{ c: AiperfRunContext; argv: string[] }> {
  const settings = agentxSettingsSchema.parse(input.settings);
  mkdirSync(input.outDir, { recursive: true });
  const artifactDir = join(input.outDir, 'aiperf_artifacts');
  // aiperf treats --num-dataset-entries as a ceiling; our loader gives the exact count
  const entries = input.traceFile ? loadTraces(input.traceFile).length : settings.aiperf.numDatasetEntries;
  // the planner fills publicDataset by InferenceX's model-prefix rule; a bare call falls back to the _256k corpus
  const loader = settings.aiperf.publicDataset ?? defaultPublicDataset(undefined);
  const traces = input.traceFile && runner.stage ? await runner.stage(input.traceFile) : input.traceFile;
  const tokenizer = aiperfTokenizer(settings, input.tokenizer, identitySchema.parse(input.identity).model);
  const argv = buildAiperfArgv({
    urls: input.endpoints,
    servedModel: input.servedModel,
    tokenizer,
    trustRemoteCode: (input.trustRemoteCodeTokenizers ?? []).some((t) => resolve(t) === resolve(tokenizer)),
    concurrency: input.concurrency,
    settings,
    metricsEndpoints: input.metricsEndpoints.map((e) =>
      new URL(e).pathname === '/' ? `${e.replace(/\/$/, '')}/metrics` : e,
    ),
    artifactDir: runner.artifactDir ?? artifactDir,
    dataset: traces ? { kind: 'file', path: traces, entries } : { kind: 'public', loader, entries },
    ...(input.maxContextLength === undefined ? {} : { maxContextLength: input.maxContextLength }),
    ...(input.goodput ? { goodput: input.goodput } : {}),
    ...(input.requestHeaders === undefined ? {} : { headers: input.requestHeaders }),
  });
  const commandPath = join(input.outDir, 'benchmark_command.txt');
  writeFileAtomic(commandPath, `${shellJoin([settings.aiperf.binary, ...argv])}\n`);
  const identity = identitySchema.parse(input.identity);
  return { c: { input, settings, identity, artifactDir, commandPath, loader, entries, startedAt: new Date() }, argv };
}

/**
 * Run one point with the pinned aiperf (PyPI aiperf in its own venv, or InferenceX's fork) in this host or
 * where `hooks.runner` runs it (the orchestrator's head-node step), and parse its exports into the same
 * PointResult shape. The argv is persisted verbatim (benchmark_command.txt) before execution.
 */
export async function runAiperfPoint(
  input: RunAiperfInput,
  hooks: RunAiperfHooks = {},
): Promise<PointResult & { aiperf: AiperfProcessStats }> {
  const runner = hooks.runner ?? localAiperfRunner;
  const { c, argv } = await prepare(input, runner);
  const scrape = c.settings.drain.scrapeTimeoutSeconds;
  const start = await snapshot(input.metricsEndpoints, scrape);
  // the nodes' DCGM exporters over the whole aiperf run, on the wall clock: the record's energy window is the span of
  // aiperf's profiled requests on its request clock, epoch ns (./record.ts); on the head node that is the head
  // node's clock, NTP-close to this host's next to the scrapes' 1 s spacing
  const dcgm =
    input.gpuTelemetry === undefined ? undefined : pointDcgmSampler(input.gpuTelemetry, scrape, () => Date.now());
  await dcgm?.start();
  let out: AiperfRunOutcome;
  try {
    out = await runner.run({
      binary: c.settings.aiperf.binary,
      argv,
      env: { ...AIPERF_ENV, ...input.env },
      logFile: join(input.outDir, 'benchmark.log'),
      artifactDir: c.artifactDir,
      hardTimeoutMs: (c.settings.profileDurationSeconds + c.settings.aiperf.processTimeoutSeconds) * 1000,
      ...(hooks.signal ? { signal: hooks.signal } : {}),
      ...(hooks.onLog ? { onLog: hooks.onLog } : {}),
    });
  } finally {
    await dcgm?.stop();
  }
  if (out.aborted) throw new PointAbortedError('aiperf point aborted by caller', { logTail: tail(out.logTail) });
  const end = await snapshot(input.metricsEndpoints, scrape);
  const stats: AiperfProcessStats = {
    exitCode: out.exitCode,
    wallSeconds: out.wallSeconds,
    childCpuSeconds: out.childCpuSeconds,
  };
  return { ...aiperfRecord(c, out, { start, end }, hooks.concurrentPointsMax?.() ?? null, dcgm), aiperf: stats };
}
