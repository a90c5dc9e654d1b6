import { describe, expect, it } from 'vitest';
import { InfersweepError } from '@infersweep/core';
import { IdleRankError, PointAbortedError, RecordInvalidError, validity } from '@infersweep/agentx';
import { ClientHealth, healthVerdict, type HealthMeasure } from '../src/client-health';
import { enterPoint, fromWire, toWire } from '../src/client-process';

const limits = { maxEventLoopDelayP99Ms: 5, maxCpuFraction: 0.85 };
const host = { name: 'login1', cpus: 2, load1: 7.5, stealFraction: 0.02 };
const measure = (m: Partial<HealthMeasure>): HealthMeasure => ({
  delayP99Ms: 1,
  delayMaxMs: 3,
  ownDelayP99Ms: 1,
  cpuFraction: 0.2,
  runQueueWaitFraction: 0.01,
  host,
  ...m,
});

describe('healthVerdict: the client is judged by its own figures, the host named when the delay is the host’s', () => {
  it('a delay the client’s own work explains is client_saturated', () => {
    const v = healthVerdict(measure({ delayP99Ms: 40, ownDelayP99Ms: 38 }), limits);
    expect(v).toEqual({
      saturated: true,
      reason: 'event-loop delay p99 40.00 ms > 5 ms (own work 38.00 ms)',
      host_saturated: false,
      host_reason: null,
    });
  });

  it('a delay the client’s own work does not explain is host_saturated, naming the host, its load and steal', () => {
    const v = healthVerdict(measure({ delayP99Ms: 40, ownDelayP99Ms: 2, runQueueWaitFraction: 0.5 }), limits);
    expect(v.saturated).toBe(false);
    expect(v.host_saturated).toBe(true);
    expect(v.host_reason).toBe(
      "host login1: the client's event-loop delay p99 40.00 ms > 5 ms, its own work 2.00 ms, its thread waited for a CPU 50 % of the window; load average 7.50 on 2 CPUs, steal 2 %",
    );
  });

  it('the client’s own CPU over the limit is client_saturated whatever the host', () => {
    const v = healthVerdict(measure({ cpuFraction: 0.9, delayP99Ms: 40, ownDelayP99Ms: 1 }), limits);
    expect(v.reason).toBe('client CPU 90 % of a core > 85 %');
    expect(v.host_saturated).toBe(true);
  });

  it('a delay within the limit is no reason, however long the thread waited for a CPU', () => {
    expect(healthVerdict(measure({ delayP99Ms: 4.9, ownDelayP99Ms: 0.5, runQueueWaitFraction: 0.6 }), limits)).toEqual({
      saturated: false,
      reason: null,
      host_saturated: false,
      host_reason: null,
    });
  });

  it('without the thread’s run-queue wait (off Linux) the whole delay counts as the client’s own', () => {
    const v = healthVerdict(measure({ delayP99Ms: 40, ownDelayP99Ms: null, runQueueWaitFraction: null }), limits);
    expect(v.reason).toBe('event-loop delay p99 40.00 ms > 5 ms (own work 40.00 ms)');
    expect(v.host_saturated).toBe(false);
  });

  it('validity turns each into its reason tag', () => {
    const v = validity({
      settings: {
        profileDurationSeconds: 10,
        canonicalMinDurationSeconds: 1,
        nonCanonical: false,
        failedRequestThreshold: 0.1,
        contextOverflowThreshold: 0.01,
        minMetricCoverage: 0,
      },
      accounting: {
        records_total: 1,
        records_profiled: 1,
        records_dropped_total: 0,
        records_warmup_dropped: 0,
        records_error_dropped: 0,
        error_categories: {},
        context_overflow_count: 0,
        grace_cancelled: 0,
      },
      successes: 1,
      coverage: 1,
      clientSaturatedReason: 'own',
      hostSaturatedReason: 'host login1',
      concurrencyHeld: 1,
      runCancelledReason: null,
      serverMetricsMissing: [],
      idleRankMessages: [],
    });
    expect(v).toEqual({ valid: false, reasons: ['client_saturated: own', 'host_saturated: host login1'] });
  });
});

/** Keep this thread busy: every 10 ms, block the event loop for `blockMs`, until `untilMs` has passed. */
function keepBusy(blockMs: number, untilMs: number): Promise<void> {
  const end = performance.now() + untilMs;
  return new Promise((resolve) => {
    const step = (): void => {
      const t = performance.now();
      while (performance.now() - t < blockMs) {
        // busy: the client's own work holds its loop
      }
      if (performance.now() >= end) resolve();
      else setTimeout(step, 10);
    };
    setTimeout(step, 10);
  });
}

describe('ClientHealth on a real thread: the gate can still fail', () => {
  it('a client whose thread is kept busy (60 ms blocks every 10 ms) is client_saturated, by its own delay', async () => {
    const h = new ClientHealth();
    h.start();
    await keepBusy(60, 1500);
    h.stop();
    const r = h.result(limits);
    expect(r.saturated).toBe(true);
    // each block delays the sampler by ~60 ms; the run-queue wait of a tick cannot explain it (the thread ran)
    expect(r.own_event_loop_delay_p99_ms!).toBeGreaterThan(limits.maxEventLoopDelayP99Ms);
    expect(r.reason).toMatch(/^event-loop delay p99 [\d.]+ ms > 5 ms \(own work [\d.]+ ms\)/);
  });

  it('an idle client is not client_saturated, and records the host and the points running beside it', async () => {
    const h = new ClientHealth();
    h.setConcurrentPoints(1);
    h.start();
    h.setConcurrentPoints(3);
    h.setConcurrentPoints(2);
    await new Promise((r) => setTimeout(r, 500));
    h.stop();
    const r = h.result(limits);
    expect(r.saturated).toBe(false);
    expect(r.concurrent_points_max).toBe(3);
    expect(r.host?.cpus).toBeGreaterThan(0);
    expect(r.cpu_fraction!).toBeLessThan(0.85);
  });
});

describe('the client process boundary', () => {
  it('errors cross it as the classes the caller tells apart, with their fields and kind', () => {
    const rec = fromWire(toWire(new RecordInvalidError(['field x'], '/r/result.invalid.json', { step: 'point:c=4' })));
    expect(rec).toBeInstanceOf(RecordInvalidError);
    expect((rec as RecordInvalidError).reasons).toEqual(['field x']);
    expect((rec as RecordInvalidError).recordPath).toBe('/r/result.invalid.json');
    const idle = fromWire(toWire(new IdleRankError('idle rank 1', [1])));
    expect((idle as IdleRankError).missing).toEqual([1]);
    expect(fromWire(toWire(new PointAbortedError('cancelled')))).toBeInstanceOf(PointAbortedError);
    const other = fromWire(toWire(new InfersweepError('scrape failed', { kind: 'transient', context: { step: 's' } })));
    expect([other.name, (other as InfersweepError).kind, (other as InfersweepError).context]).toEqual([
      'InfersweepError',
      'transient',
      { step: 's' },
    ]);
    expect(fromWire(toWire(new TypeError('boom'))).name).toBe('TypeError');
  });

  it('every running point hears the count of points running in the process', () => {
    const heard: number[][] = [[], []];
    const a = enterPoint((n) => heard[0]!.push(n));
    const b = enterPoint((n) => heard[1]!.push(n));
    b.leave();
    a.leave();
    expect(heard).toEqual([[1, 2, 1], [2]]);
    expect([a.count, b.count]).toEqual([1, 2]);
  });
});
