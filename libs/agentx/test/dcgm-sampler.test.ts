import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DcgmSampler, dcgmExporterTargets, windowEnergy, type DcgmTarget } from '@infersweep/agentx';

describe('dcgmExporterTargets', () => {
  it('one exporter per node at http://<NodeAddr>:<port>/metrics, named by the node', () => {
    expect(
      dcgmExporterTargets(
        [
          { node: 'gpu-a1', address: '10.0.0.11' },
          { node: 'gpu-a2', address: 'gpu-a2.cluster' },
          { node: 'gpu-a3', address: 'fd00::3' },
        ],
        9400,
      ),
    ).toEqual([
      { host: 'gpu-a1', url: 'http://10.0.0.11:9400/metrics' },
      { host: 'gpu-a2', url: 'http://gpu-a2.cluster:9400/metrics' },
      { host: 'gpu-a3', url: 'http://[fd00::3]:9400/metrics' },
    ]);
  });

  it('nodes sharing an address share one exporter, scraped once (never its GPUs counted twice)', () => {
    expect(
      dcgmExporterTargets(
        [
          { node: 'node1', address: '127.0.0.1' },
          { node: 'node2', address: '127.0.0.1' },
        ],
        39400,
      ),
    ).toEqual([{ host: 'node1', url: 'http://127.0.0.1:39400/metrics' }]);
  });
});

describe('DcgmSampler schedule (fake timers, a scripted exporter)', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  const targets: DcgmTarget[] = [
    { host: 'n1', url: 'http://n1:9400/metrics' },
    { host: 'n2', url: 'http://n2:9400/metrics' },
  ];

  it('a round at start, one per interval while the window runs, one at stop; each stamped on the clock', async () => {
    const fetched: string[] = [];
    const sampler = new DcgmSampler({
      targets,
      intervalSeconds: 1,
      fetchText: (url) => (fetched.push(url), Promise.resolve(`# from ${url}\n`)),
      now: () => Date.now(),
    });
    const t0 = Date.now();
    await sampler.start();
    expect(sampler.scrapes.map((s) => [s.host, s.t - t0])).toEqual([
      ['n1', 0],
      ['n2', 0],
    ]);
    await vi.advanceTimersByTimeAsync(3500);
    await sampler.stop();
    // start (0 ms), ticks at 1000, 2000, 3000 ms, stop (3500 ms)
    expect(sampler.scrapes.map((s) => s.t - t0)).toEqual([0, 0, 1000, 1000, 2000, 2000, 3000, 3000, 3500, 3500]);
    expect(fetched.filter((u) => u === targets[1]!.url)).toHaveLength(5);
    // stopped: no more rounds
    await vi.advanceTimersByTimeAsync(5000);
    expect(sampler.scrapes).toHaveLength(10);
  });

  it('a failed scrape is kept as an error sample with its node and time, not dropped', async () => {
    let down = false;
    const sampler = new DcgmSampler({
      targets: [targets[0]!],
      intervalSeconds: 1,
      fetchText: () => (down ? Promise.reject(new Error('ECONNREFUSED')) : Promise.resolve('ok\n')),
      now: () => Date.now(),
    });
    const t0 = Date.now();
    await sampler.start();
    down = true;
    await vi.advanceTimersByTimeAsync(1000);
    await sampler.stop();
    expect(sampler.scrapes.map((s) => ({ ...s, t: s.t - t0 }))).toEqual([
      { t: 0, host: 'n1', text: 'ok\n' },
      { t: 1000, host: 'n1', error: 'ECONNREFUSED' },
      { t: 1000, host: 'n1', error: 'ECONNREFUSED' },
    ]);
  });

  it('a slow exporter: a tick while a round is in flight is skipped; stop waits for that round', async () => {
    const sampler = new DcgmSampler({
      targets: [targets[0]!],
      intervalSeconds: 1,
      fetchText: () => new Promise((r) => setTimeout(() => r('ok\n'), 2500)),
      now: () => Date.now(),
    });
    const t0 = Date.now();
    const started = sampler.start();
    await vi.advanceTimersByTimeAsync(2500);
    await started;
    // the round the 3.5 s tick starts is in flight at the 4.5 s and 5.5 s ticks: those are skipped
    await vi.advanceTimersByTimeAsync(3000);
    const stopped = sampler.stop();
    await vi.advanceTimersByTimeAsync(5000);
    await stopped;
    expect(sampler.scrapes.map((s) => s.t - t0)).toEqual([2500, 6000, 8500]);
  });
});

/** The Tesla T4 section of data/dcgm-exporter-captures.txt (DataDog's recorded scrape: 8.969 W). */
const t4 = /# capture name=t4 host=\S+\n([\s\S]*?)(?=^# capture name=|(?![\s\S]))/m.exec(
  readFileSync(new URL('./data/dcgm-exporter-captures.txt', import.meta.url), 'utf8'),
)![1]!;

describe('windowEnergy: the record energy of a point', () => {
  const origin = 1_700_000_000_000;
  const run = {
    originWallMs: origin,
    profileStartMs: 1_000,
    profileEndMs: 11_000,
    records: [
      { phase: 'warmup', ok: true, isl: 999, osl: 999 },
      { phase: 'profiling', ok: true, isl: 1000, osl: 100 },
      { phase: 'profiling', ok: true, isl: 3000, osl: 300 },
      { phase: 'profiling', ok: false, isl: 500, osl: null },
    ] as never,
  };
  const scrapesEvery = (ms: number[]) => ({ scrapes: ms.map((t) => ({ t, host: 'n1', text: t4 })) });

  it("the window on the replay's clock; a constant recorded power integrates to watts × seconds; J/token over profiled successes", () => {
    const e = windowEnergy(run, scrapesEvery([900, 2000, 4000, 6000, 8000, 10_000, 11_050]), 1, {
      pricePerGpuHour: 0.5,
    })!;
    expect(e.window).toEqual({ start: (origin + 1000) / 1000, end: (origin + 11_000) / 1000 });
    expect(e.power_valid).toBe(true);
    expect(e.per_gpu_j['424773df46e0/0']).toBeCloseTo(8.969 * 10, 9);
    expect(e.metrics!.joules_per_total_token).toBeCloseTo((8.969 * 10) / 4400, 12);
    expect(e.metrics!.joules_per_successful_query).toBeCloseTo((8.969 * 10) / 2, 12);
    expect(e.dollars_per_million_tokens).toBeCloseTo(((0.5 * 10) / 3600 / 4400) * 1e6, 9);
  });

  it('no profile (a cancelled point): no energy block', () => {
    expect(windowEnergy({ ...run, profileStartMs: null }, scrapesEvery([0]), 1)).toBeUndefined();
  });
});
