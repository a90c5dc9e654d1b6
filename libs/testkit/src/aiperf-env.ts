import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { RunAiperfInput } from '@infersweep/agentx';
import type { SweepPlan } from '@infersweep/topology';
import { repoRoot, toolsDir } from './stack';

/** PyPI aiperf 0.13.0 in its own venv (scripts/setup.sh). */
export const aiperfBinary = join(toolsDir, 'aiperf-venv', 'bin', 'aiperf');

/**
 * aiperf must load a tokenizer to build the dataset even with --use-server-token-count; offline there is
 * no Hub and `builtin` downloads tiktoken data. scripts/setup.sh puts a small local HF tokenizer (the
 * test tokenizer the llm-d-kv-cache Go module ships) in .tools/tokenizer; INFERSWEEP_AIPERF_TOKENIZER overrides it.
 */
export const aiperfTokenizer = process.env.INFERSWEEP_AIPERF_TOKENIZER ?? join(toolsDir, 'tokenizer');

export function assertAiperfAvailable(): void {
  if (!existsSync(aiperfBinary)) throw new Error(`aiperf not installed at ${aiperfBinary} (npm run setup)`);
  if (!existsSync(aiperfTokenizer))
    throw new Error(`no local tokenizer at ${aiperfTokenizer}: set INFERSWEEP_AIPERF_TOKENIZER`);
}

/**
 * A plan's points measured by the local PyPI aiperf over the configured traces (a plan mutator for
 * sweep-harness.ts testPlan); aiperf starts its services and configures the dataset before the profile,
 * so its warmup gets room.
 */
export function measureWithLocalAiperf(p: SweepPlan): void {
  p.agentx.client = 'aiperf';
  p.agentx.aiperf = {
    ...p.agentx.aiperf,
    binary: aiperfBinary,
    flavor: 'pypi',
    tokenizer: aiperfTokenizer,
    traces: 'configured',
  };
  p.agentx.warmupGracePeriodSeconds = 60;
}

/** A short PyPI-aiperf point against the simulator at `url` over the test traces (non-canonical: unsafe override). */
export function simAiperfInput(
  url: string,
  outDir: string,
  over: { concurrency: number; profileDurationSeconds: number } & Partial<RunAiperfInput>,
): RunAiperfInput {
  const { profileDurationSeconds, ...rest } = over;
  return {
    endpoints: [url],
    metricsEndpoints: [url],
    servedModel: 'agentx-sim',
    gpuCount: 1,
    settings: {
      profileDurationSeconds,
      nonCanonical: true,
      warmupGracePeriodSeconds: 60,
      aiperf: { binary: aiperfBinary, flavor: 'pypi', tokenizer: aiperfTokenizer },
    },
    identity: {
      sweepId: 'int',
      orientation: 'latency',
      topology: 'sim',
      image: 'sim',
      model: 'agentx-sim',
      engineArgsFingerprint: 'x',
      jobId: null,
      nodes: [],
      attempt: 0,
      deploymentPolicy: 'shared-server',
    },
    outDir,
    traceFile: join(repoRoot, 'libs/agentx/test/data/traces'),
    ...rest,
  };
}
