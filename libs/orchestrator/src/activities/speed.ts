/**
 * The local stack's between-allocation variance (the simulator override's `allocationSpeed`): each
 * server launch scales the simulator's latencies by a multiplier drawn for its allocation, seeded by
 * the configured seed and the job id, so a relaunch on the same allocation draws the same one and the
 * truth of every replicate is known (the multiplier is recorded on the allocation's record).
 */
import { contentHash } from '@infersweep/core';
import { seededRng } from '@infersweep/stats';

/** exp(sd · z), z standard normal drawn from seed and job id: a lognormal multiplier with median 1. */
export function allocationSpeedMultiplier(speed: { seed: number; sd: number }, jobId: string): number {
  const seed = Number.parseInt(contentHash([speed.seed, jobId]).slice(0, 8), 16);
  return Math.exp(speed.sd * seededRng(seed).normal());
}

const LATENCY_FLAGS = new Set(['--time-to-first-token', '--inter-token-latency']);

/**
 * The simulator's argv with each latency flag's value (a Go duration in milliseconds, e.g. `20ms`)
 * replaced by `f(flag, milliseconds)`; any other value of those flags is refused.
 */
export function mapSimulatorLatencies(argv: readonly string[], f: (flag: string, ms: number) => string): string[] {
  return argv.map((a, i) => {
    const flag = argv[i - 1];
    if (i === 0 || !LATENCY_FLAGS.has(flag!)) return a;
    const ms = /^(\d+(?:\.\d+)?)ms$/.exec(a);
    if (!ms) throw new TypeError(`simulator latency ${flag} ${a}: expected milliseconds, e.g. 20ms`);
    return f(flag!, Number(ms[1]));
  });
}

/** The simulator's argv with its latency flags scaled by `m`, in whole microseconds. */
export function scaleSimulatorLatencies(argv: readonly string[], m: number): string[] {
  return mapSimulatorLatencies(argv, (_flag, ms) => `${Math.round(ms * m * 1000)}us`);
}
