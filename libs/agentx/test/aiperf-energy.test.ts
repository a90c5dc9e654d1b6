import { describe, expect, it } from 'vitest';
import type { DcgmScrape } from '@infersweep/agentx';
import { dcgmCaptures, profiledTokens, T4_WATTS } from '@infersweep/testkit/dcgm-captures';
import { data, recordedAiperfPoint } from './aiperf-fixture';

/**
 * The energy block of an aiperf point (../src/aiperf/record.ts): the same integral and gates as infersweep's client,
 * over the window the profiled requests span on aiperf's own request clock (request_start_ns / request_end_ns, epoch
 * ns). The export is a real aiperf 0.13.0 run against the simulator (data/aiperf-sim-pd-c2-*); the scrapes are
 * DataDog's recorded Tesla T4 exposition (data/dcgm-exporter-captures.txt, 8.969 W), timed on the wall clock as
 * run.ts's sampler times them.
 */
const t4 = dcgmCaptures().t4!.text;
const rows = data('aiperf-sim-pd-c2-profile-export.jsonl')
  .split('\n')
  .filter((l) => l.trim() !== '')
  .map(
    (l) =>
      JSON.parse(l) as {
        metadata: { benchmark_phase: string; request_start_ns: number; request_end_ns: number };
        error?: unknown;
      },
  );
const profiled = rows.filter((r) => r.metadata.benchmark_phase === 'profiling');
/** The profiled requests' span in wall seconds, straight from the export. */
const span = {
  start: Math.min(...profiled.map((r) => r.metadata.request_start_ns)) / 1e9,
  end: Math.max(...profiled.map((r) => r.metadata.request_end_ns)) / 1e9,
};

/** One scrape a second (wall-clock ms, as run.ts's sampler records them) from 2 s before the span to 2 s after. */
function scrapes(fail?: (t: number) => boolean): DcgmScrape[] {
  const out: DcgmScrape[] = [];
  for (let t = Math.floor(span.start) - 2; t <= Math.ceil(span.end) + 2; t++)
    out.push(
      fail?.(t)
        ? { t: t * 1000, host: 'node1', error: 'connect ECONNREFUSED' }
        : { t: t * 1000, host: 'node1', text: t4 },
    );
  return out;
}

function aiperfPoint(dcgm?: { scrapes: DcgmScrape[] }) {
  return recordedAiperfPoint({
    input: {
      gpuCount: 1,
      gpuTelemetry: {
        targets: [{ host: 'node1', url: 'http://node1:9400/metrics' }],
        intervalSeconds: 1,
        pricePerGpuHour: 2.5,
      },
    },
    serverMetrics: false,
    ...(dcgm === undefined ? {} : { dcgm }),
  });
}

describe('the energy block of an aiperf point', () => {
  it('integrates the recorded watts over the profiled requests’ span, per token and per dollar', () => {
    const r = aiperfPoint({ scrapes: scrapes() });
    const e = r.energy!;
    expect(e.source).toBe('dcgm');
    expect(e.invalid_reasons).toEqual([]);
    expect(e.power_valid).toBe(true);
    expect(e.window.start).toBeCloseTo(span.start, 3);
    expect(e.window.end).toBeCloseTo(span.end, 3);
    const seconds = span.end - span.start;
    expect(seconds).toBeGreaterThan(5);
    const joules = Object.values(e.per_gpu_j);
    expect(joules).toHaveLength(1);
    expect(joules[0]! / (T4_WATTS * seconds)).toBeCloseTo(1, 6);
    // the tokens of the successful profiled requests, from the record's requests.jsonl
    const tokens = profiledTokens(r.artifacts.requests_jsonl!);
    expect(tokens).toBeGreaterThan(0);
    expect(e.metrics!.joules_per_total_token).toBeCloseTo(joules[0]! / tokens, 9);
    expect(e.price_per_gpu_hour).toBe(2.5);
  });

  it('a scrape that failed inside the span makes power invalid, naming the node and the error', () => {
    const mid = Math.round((span.start + span.end) / 2);
    const e = aiperfPoint({ scrapes: scrapes((t) => t === mid) }).energy!;
    expect(e.power_valid).toBe(false);
    expect(e.metrics).toBeNull();
    const failed = e.invalid_reasons.filter((x) => x.startsWith('dcgm_scrape_failed:'));
    expect(failed).toHaveLength(1);
    const m = /^dcgm_scrape_failed: node1 at (\S+): connect ECONNREFUSED$/.exec(failed[0]!)!;
    expect(Number(m[1])).toBeCloseTo(mid, 3);
  });

  it('scrapes that do not bracket the span (the sampler started late) are not bridged', () => {
    const late = scrapes().filter((s) => s.t / 1000 > span.start + 1);
    const e = aiperfPoint({ scrapes: late }).energy!;
    expect(e.power_valid).toBe(false);
    expect(e.invalid_reasons.some((x) => x.startsWith('benchmark_window_not_bracketed'))).toBe(true);
  });

  it('without telemetry there is no energy block', () => {
    expect(aiperfPoint().energy).toBeUndefined();
  });
});
