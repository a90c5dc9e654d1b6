/**
 * GPU energy from the cluster's DCGM exporters, on the real stack (Temporal dev server, local Slurm over the
 * loopback sshd, the simulator per allocation). The node's "exporter" is Python's stdlib static file server
 * (`python3 -m http.server`) serving DataDog's recorded Tesla T4 scrape (libs/agentx/test/data/
 * dcgm-exporter-captures.txt) as `/metrics`: a constant recorded power, so the window's energy is a known
 * integral (8.969 W × the window's seconds). The local stack's nodes all have NodeAddr 127.0.0.1 and one
 * port serves one exporter, so the deployment is one node with one GPU (the capture's one T4): the test
 * covers the plan field, the endpoint from the node's NodeAddr, the timed sampler over the window, the
 * record (of either client), the worker's price and the scrape-failure gate; a multi-node allocation's several exporters are
 * covered by the unit tests of libs/agentx/test/dcgm-sampler.test.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import type { SweepResult } from '@infersweep/sweep';
import type { SweepPlan } from '@infersweep/topology';
import { loadWorkerSettings, type WorkerSettings } from '@infersweep/orchestrator';
import { assertAiperfAvailable, measureWithLocalAiperf } from '@infersweep/testkit/aiperf-env';
import { dcgmCaptures, profiledTokens, T4_WATTS } from '@infersweep/testkit/dcgm-captures';
import {
  localSlurm,
  notSaturationGated,
  readPoint,
  realStackSuite,
  startOnNewWorker,
  testInput,
  testPlan,
  waitHeartbeat,
} from '@infersweep/testkit/sweep-harness';

const slurm = localSlurm();
const suite = realStackSuite(slurm);

/** DataDog's recorded Tesla T4 scrape, as the exporter sent it (its DCGM_FI_DEV_POWER_USAGE is T4_WATTS). */
const t4 = dcgmCaptures().t4!.text;

/** `python3 -m http.server` on a free loopback port, serving `metrics` (the T4 scrape) from a folder of its own. */
async function startExporter(): Promise<{ port: number; proc: ChildProcess }> {
  const dir = mkdtempSync(join(tmpdir(), 'dcgm-exporter-'));
  writeFileSync(join(dir, 'metrics'), t4);
  const proc = spawn('python3', ['-u', '-m', 'http.server', '0', '--bind', '127.0.0.1', '--directory', dir], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  for await (const line of createInterface({ input: proc.stdout! })) {
    const port = /Serving HTTP on \S+ port (\d+)/.exec(line)?.[1];
    if (port !== undefined) return { port: Number(port), proc };
  }
  throw new Error('python3 -m http.server exited before serving');
}

const exporters: ChildProcess[] = [];
afterAll(() => exporters.forEach((p) => p.kill()));

/**
 * A one-node, one-GPU plan (the recorded scrape's one Tesla T4) whose cluster scrapes `exporter`, and the worker
 * settings of `local` naming the same exporter (the telemetry port is the site's), with `prices` when given.
 */
function energyPlan(
  exporter: { port: number },
  points: number[],
  prices?: Record<string, number>,
): { plan: SweepPlan; settings: WorkerSettings } {
  const plan = testPlan('latency', points, notSaturationGated, (c) => {
    const local = c.clusters.local!;
    local.gpusPerNode = 1;
    local.gpuTelemetry = { dcgmExporterPort: exporter.port, intervalSeconds: 1 };
    c.orientations.latency!.topology = { tp: 1, pp: 1, dp: 1, ep: 1, nodes: 1 } as never;
  });
  const settings = loadWorkerSettings('local');
  const clusters = { ...settings.clusters, local: { ...settings.clusters.local!, gpuTelemetry: plan.gpuTelemetry } };
  return { plan, settings: { ...settings, clusters, ...(prices === undefined ? {} : { gpuHourPrices: prices }) } };
}

describe('GPU energy from a DCGM exporter over the profile window (real stack)', () => {
  it('c=1: energy = recorded watts × window per GPU, power valid, J/token and $/M tokens; c=2 with the exporter stopped mid-window: power invalid, dcgm_scrape_failed', async () => {
    const exporter = await startExporter();
    exporters.push(exporter.proc);
    const { plan, settings } = energyPlan(exporter, [1, 2], { FAKE: 2.5 });
    expect(plan.topology.gpus).toBe(1);
    expect(plan.gpuTelemetry).toEqual({ dcgmExporterPort: exporter.port, intervalSeconds: 1 });
    const input = testInput(plan, 'gpu-energy');
    const { worker, h } = await startOnNewWorker(suite.client(), input, { settings });
    const result = (await worker.runUntil(async () => {
      // the second point's window is open: its exporter goes away
      await waitHeartbeat(h, (d) => d.concurrency === 2 && d.phase === 'profiling', 180_000, 'c=2 profiling');
      exporter.proc.kill('SIGKILL');
      const killedAt = Date.now() / 1000;
      const r = (await h.result()) as SweepResult;
      return { r, killedAt };
    })) as { r: SweepResult; killedAt: number };
    expect(result.r.status).toBe('completed');

    const p1 = readPoint(input.resultsDir, 1);
    const e1 = p1.energy!;
    expect(e1.source).toBe('dcgm');
    expect(e1.invalid_reasons).toEqual([]);
    expect(e1.power_valid).toBe(true);
    // the window is the record's profile window
    expect(e1.window.start * 1000).toBeCloseTo(Date.parse(p1.timing.profiling_started_at!), -1);
    expect(e1.window.end * 1000).toBeCloseTo(Date.parse(p1.timing.profiling_ended_at!), -1);
    const seconds = e1.window.end - e1.window.start;
    expect(seconds).toBeGreaterThan(p1.timing.profile_duration_seconds * 0.9);
    const joules = e1.per_gpu_j['424773df46e0/0']!;
    expect(Object.keys(e1.per_gpu_j)).toEqual(['424773df46e0/0']);
    expect(Math.abs(joules / (T4_WATTS * seconds) - 1)).toBeLessThan(0.01);
    const tokens = profiledTokens(p1.artifacts.requests_jsonl!);
    expect(tokens).toBeGreaterThan(0);
    expect(e1.metrics!.joules_per_total_token).toBeCloseTo(joules / tokens, 12);
    expect(e1.price_per_gpu_hour).toBe(2.5);
    expect(e1.dollars_per_million_tokens).toBeCloseTo(((2.5 * seconds) / 3600 / tokens) * 1e6, 6);

    const e2 = readPoint(input.resultsDir, 2).energy!;
    expect(result.killedAt).toBeGreaterThan(e2.window.start);
    expect(result.killedAt).toBeLessThan(e2.window.end);
    expect(e2.power_valid).toBe(false);
    expect(e2.metrics).toBeNull();
    const failed = e2.invalid_reasons.filter((x) => x.startsWith('dcgm_scrape_failed:'));
    expect(failed.length).toBeGreaterThan(0);
    // each failure names the node, a time after the kill and the error
    for (const f of failed) {
      const m = /^dcgm_scrape_failed: (\S+) at (\S+): (.+)$/.exec(f)!;
      expect(result.r.allocations[0]!.nodes).toContain(m[1]);
      expect(Number(m[2])).toBeGreaterThan(result.killedAt);
      expect(m[3]).toMatch(/ECONNREFUSED/);
    }
  });

  it('aiperf measures the point: the same energy block, over the span of its profiled requests on the wall clock', async () => {
    assertAiperfAvailable();
    const exporter = await startExporter();
    exporters.push(exporter.proc);
    const { plan, settings } = energyPlan(exporter, [1]);
    measureWithLocalAiperf(plan);
    const input = testInput(plan, 'gpu-energy-aiperf');
    const { worker, h } = await startOnNewWorker(suite.client(), input, { settings });
    const result = (await worker.runUntil(h.result())) as SweepResult;
    expect(result.status).toBe('completed');

    const p1 = readPoint(input.resultsDir, 1);
    expect(p1.client.name).toBe('aiperf');
    const e = p1.energy!;
    expect(e.source).toBe('dcgm');
    expect(e.invalid_reasons).toEqual([]);
    expect(e.power_valid).toBe(true);
    // the window is the profiled requests' span (the record's measured seconds), inside the point's wall-clock run
    const seconds = e.window.end - e.window.start;
    expect(seconds).toBeCloseTo(p1.timing.measured_profile_seconds!, 3);
    expect(e.window.start * 1000).toBeGreaterThan(Date.parse(p1.timing.started_at));
    expect(e.window.end * 1000).toBeLessThan(Date.parse(p1.timing.ended_at));
    const joules = e.per_gpu_j['424773df46e0/0']!;
    expect(Math.abs(joules / (T4_WATTS * seconds) - 1)).toBeLessThan(0.01);
    const tokens = profiledTokens(p1.artifacts.requests_jsonl!);
    expect(tokens).toBeGreaterThan(0);
    expect(e.metrics!.joules_per_total_token).toBeCloseTo(joules / tokens, 12);
  });
});
