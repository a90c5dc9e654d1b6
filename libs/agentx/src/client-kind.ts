import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { agentxSettingsSchema, type AgentxSettings } from '@infersweep/topology';
import { runAiperfPoint } from './aiperf/run';
import type { AiperfRunner } from './aiperf/runner';
import type { Phase } from './client/replay';
import { enterPoint, runPointInOwnProcess } from './client-process';
import type { RunPointHooks, RunPointInput } from './point';
import type { PointResult } from './result';
import { acceptanceWarning } from './server/spec-decode';
import { resolveTraces } from './traces';

/**
 * One concurrency point with the client the settings choose (`agentx.client`): infersweep's own
 * (`runPoint`) or the pinned aiperf (`runAiperfPoint`, InferenceX's flag set). Both produce the same
 * PointResult; the sweep's point activity calls only this.
 */
export async function runPointWithClient(
  input: RunPointInput & {
    outDir: string;
    maxContextLength?: number;
    tokenizer?: string;
    trustRemoteCodeTokenizers?: readonly string[];
  },
  hooks: RunPointHooks & { aiperfRunner?: AiperfRunner } = {},
): Promise<PointResult> {
  const settings = agentxSettingsSchema.parse(input.settings);
  if (settings.client === 'infersweep') {
    const { maxContextLength: _ignored, tokenizer: _counts, trustRemoteCodeTokenizers: _aiperfOnly, ...own } = input;
    // its own process: the client-health gate measures this point's client alone (client-process.ts)
    const { aiperfRunner: _aiperf, ...clientHooks } = hooks;
    return runPointInOwnProcess(own, clientHooks);
  }
  const traceFile = settings.aiperf.traces === 'configured' ? configuredTraces(settings, input.outDir) : undefined;
  // aiperf reports through its log: phase markers drive the progress, a timer keeps it flowing (heartbeats)
  let phase: Phase = 'warmup';
  let profilingAt: number | null = null;
  const beat = () => {
    const eta =
      profilingAt === null ? null : Math.max(0, settings.profileDurationSeconds - (Date.now() - profilingAt) / 1000);
    hooks.onProgress?.({ phase, completed: 0, inFlight: 0, etaSeconds: eta });
  };
  const timer = setInterval(beat, 5_000);
  beat();
  let pointsMax = 0;
  const point = enterPoint((n) => (pointsMax = Math.max(pointsMax, n)));
  try {
    const { aiperf: _stats, ...result } = await runAiperfPoint(
      { ...input, ...(traceFile === undefined ? {} : { traceFile }) },
      {
        ...(hooks.signal ? { signal: hooks.signal } : {}),
        ...(hooks.aiperfRunner ? { runner: hooks.aiperfRunner } : {}),
        concurrentPointsMax: () => pointsMax,
        onLog: (text) => {
          const next = aiperfPhase(text);
          if (next === 'profiling' && profilingAt === null) profilingAt = Date.now();
          if (next !== null) phase = next;
        },
      },
    );
    const drift = acceptanceWarning(result.server_metrics.spec_decode ?? null, input.expectedAcceptanceLength);
    return drift === null ? result : { ...result, warnings: [...result.warnings, drift] };
  } finally {
    clearInterval(timer);
    point.leave();
  }
}

/** The phase an aiperf log chunk announces (its `Phase … started/complete` markers), or null. */
export function aiperfPhase(text: string): Phase | null {
  if (/Phase profiling complete/i.test(text)) return 'draining';
  if (/Phase profiling started/i.test(text)) return 'profiling';
  if (/WARMUP cache pressure/i.test(text)) return 'cache-pressure';
  return null;
}

/** The configured traces as aiperf input: a file source as is; synthetic traces written as Weka files next to the point. */
export function configuredTraces(settings: AgentxSettings, outDir: string): string {
  if (settings.traces.kind === 'file') return settings.traces.path;
  const dir = join(outDir, 'traces');
  mkdirSync(dir, { recursive: true });
  const { traces } = resolveTraces(settings.traces);
  traces.forEach((t, i) => writeFileSync(join(dir, `syn-${String(i).padStart(4, '0')}.json`), JSON.stringify(t)));
  return dir;
}
