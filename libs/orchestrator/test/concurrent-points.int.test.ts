/**
 * Client health per point on the real stack: two sweeps measured at once by one worker do not
 * invalidate each other. Each point's client runs in its own process (libs/agentx/src/client-process.ts),
 * so the client-health gate reads that client's own CPU and event loop; the record says how many points
 * the worker measured at once. This file keeps the gate (the shipped local limits): it is
 * saturation-gated (lane A, test/lanes.ts).
 */
import { describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import type { PointResult } from '@infersweep/agentx';
import type { SweepResult } from '@infersweep/sweep';
import type { SweepPlan } from '@infersweep/topology';
import {
  localSlurm,
  newWorker,
  noSubagents,
  profileSeconds,
  readPoint,
  realStackSuite,
  start,
  testInput,
  testPlan,
} from '@infersweep/testkit/sweep-harness';

const slurm = localSlurm();
const suite = realStackSuite(slurm);

const C = 16;
/** Long enough that the two sweeps' windows overlap by most of it, whatever their start-up order. */
const PROFILE_SECONDS = 30;

const c16 = (extra?: (p: SweepPlan) => void) =>
  testPlan(
    'latency',
    [C],
    (p) => {
      noSubagents(p); // a c=16 point holds 16 requests in flight
      profileSeconds(PROFILE_SECONDS)(p);
      extra?.(p);
    },
    (cfg) => {
      cfg.orientations.latency!.concurrency = [C];
    },
  );

/**
 * Run these sweeps at once on one new worker; each one's c=16 record. Every sweep completes with its
 * point measured; whether the point is valid is the caller's to check (its reasons name a saturation).
 */
async function runTogether(plans: SweepPlan[], tag: string): Promise<PointResult[]> {
  const tq = `t-${randomUUID()}`;
  const worker = await newWorker(tq);
  const inputs = plans.map((p, i) => testInput(p, `${tag}-${i}`));
  const handles = await Promise.all(inputs.map((input) => start(suite.client(), input, tq)));
  const results = (await worker.runUntil(Promise.all(handles.map((h) => h.result())))) as SweepResult[];
  expect(results.map((r) => [r.status, r.points.map((p) => p.concurrency)])).toEqual(
    plans.map(() => ['completed', [C]]),
  );
  return inputs.map((i) => readPoint(i.resultsDir, C));
}

const window = (r: PointResult): [number, number] => [
  Date.parse(r.timing.profiling_started_at!),
  Date.parse(r.timing.profiling_ended_at!),
];

describe('client health per point: one worker, two sweeps at once', () => {
  it(`two concurrent c=${C} points, each valid alone, are both valid together`, async () => {
    // alone: valid under the shipped local gate (25 ms event-loop delay p99, 0.85 of a core)
    const [a] = await runTogether([c16()], 'alone');
    // a host that gives the client no CPU fails here, its reason naming the host (host_saturated)
    expect(a!.submission_invalid_reasons).toEqual([]);
    expect(a!.client_health.concurrent_points_max).toBe(1);
    const cpuAlone = a!.client_health.cpu_fraction!;
    expect(cpuAlone).toBeGreaterThan(0);

    // together, under a CPU limit the point alone clears by half again: two clients measured by the
    // worker's process would read their CPU added up (≥ 2× one) and both be client_saturated
    const cpuLimit = 1.5 * cpuAlone;
    const tighter = (p: SweepPlan): void => {
      p.agentx.clientHealth = { ...p.agentx.clientHealth, maxCpuFraction: cpuLimit };
    };
    const [r1, r2] = await runTogether([c16(tighter), c16(tighter)], 'pair');
    const [w1, w2] = [window(r1!), window(r2!)];
    const overlap = Math.min(w1[1], w2[1]) - Math.max(w1[0], w2[0]);
    console.info(
      `[measure] alone: CPU ${cpuAlone.toFixed(3)}, delay p99 ${a!.client_health.event_loop_delay_p99_ms} ms; ` +
        `together (CPU limit ${cpuLimit.toFixed(3)}, windows overlap ${(overlap / 1000).toFixed(1)} s): ` +
        [r1!, r2!]
          .map(
            (r) =>
              `CPU ${r.client_health.cpu_fraction?.toFixed(3)}, delay p99 ${r.client_health.event_loop_delay_p99_ms} ms ` +
              `(own ${r.client_health.own_event_loop_delay_p99_ms} ms), run-queue wait ${r.client_health.run_queue_wait_fraction?.toFixed(3)}`,
          )
          .join('; '),
    );
    // the two profiling windows overlapped for most of their length, and each record says so
    expect(overlap).toBeGreaterThan((PROFILE_SECONDS * 1000) / 2);
    expect([r1!.client_health.concurrent_points_max, r2!.client_health.concurrent_points_max]).toEqual([2, 2]);
    expect([r1!.submission_invalid_reasons, r2!.submission_invalid_reasons]).toEqual([[], []]);
    expect([r1!.submission_valid, r2!.submission_valid]).toEqual([true, true]);
  });
});
