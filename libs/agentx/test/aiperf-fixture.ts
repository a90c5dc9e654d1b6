import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pointResultSchema, type EndpointSnapshot, type PointResult } from '@infersweep/agentx';
import type { DcgmSampler } from '../src/server/dcgm-sampler';
import { aiperfRecord, type AiperfRunContext } from '../src/aiperf/record';

/** A file of ./data. */
export const data = (f: string): string => readFileSync(new URL(`./data/${f}`, import.meta.url), 'utf8');

/** The record infersweep wrote for the recorded aiperf P/D point (data/aiperf-sim-pd-c2-result.json). */
const recordedAiperfResult = pointResultSchema.parse(JSON.parse(data('aiperf-sim-pd-c2-result.json')));

/**
 * The recorded artifacts of a real aiperf 0.13.0 P/D point through llm-d's sidecar (data/aiperf-sim-pd-c2-*: its
 * profile_export.jsonl, the fields of profile_export_aiperf.json the adapter reads and, unless `serverMetrics` is
 * false, server_metrics_export.json; libs/agentx/test/inferencex-export.test.ts says how they were made), read back
 * through the adapter's aiperfRecord in a folder of its own, with `input` over the recorded point's.
 */
export function recordedAiperfPoint(opts: {
  input?: Partial<AiperfRunContext['input']>;
  snaps?: { start: EndpointSnapshot[]; end: EndpointSnapshot[] };
  serverMetrics?: boolean;
  dcgm?: Pick<DcgmSampler, 'scrapes'>;
}): PointResult {
  const recorded = recordedAiperfResult;
  const outDir = mkdtempSync(join(tmpdir(), 'aiperf-recorded-'));
  const artifactDir = join(outDir, 'aiperf_artifacts');
  mkdirSync(artifactDir);
  writeFileSync(join(artifactDir, 'profile_export.jsonl'), data('aiperf-sim-pd-c2-profile-export.jsonl'));
  writeFileSync(join(artifactDir, 'profile_export_aiperf.json'), data('aiperf-sim-pd-c2-profile-export-aiperf.json'));
  if (opts.serverMetrics !== false)
    writeFileSync(join(artifactDir, 'server_metrics_export.json'), data('aiperf-sim-pd-c2-server-metrics-export.json'));
  const input = {
    concurrency: 2,
    endpoints: recorded.endpoints,
    metricsEndpoints: [],
    servedModel: recorded.served_model,
    settings: recorded.settings,
    gpuCount: recorded.gpu_count,
    identity: recorded.identity,
    outDir,
    ...opts.input,
  };
  const c = {
    input,
    settings: recorded.settings,
    identity: recorded.identity,
    artifactDir,
    commandPath: join(outDir, 'benchmark_command.txt'),
    loader: 'weka_trace',
    entries: 16,
    startedAt: new Date(),
  };
  const out = { exitCode: 0, wallSeconds: 30, childCpuSeconds: null, logTail: '', aborted: false };
  return aiperfRecord(c, out, opts.snaps ?? { start: [], end: [] }, null, opts.dcgm);
}
