/**
 * Apache Otava as the referee of libs/stats eDivisive (PyPI apache-otava 0.8.0 in .tools/otava-venv,
 * scripts/setup-otava.sh): the driver ./otava-referee.py and the seeded series H8 and H8b use
 * (docs/history.md). Shared by otava-referee.test.ts (unit) and otava-matched.nightly.test.ts.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { seededRng } from '@infersweep/stats';
import { toolsDir } from '@infersweep/testkit/stack';
import { driftSeries } from '@infersweep/testkit/nights-fixture';

const OTAVA_PYTHON = join(toolsDir, 'otava-venv', 'bin', 'python');

/** Otava's answer to one request of ./otava-referee.py (its header lists them). */
export function otava<T>(request: unknown, timeoutMs = 120_000): T {
  return JSON.parse(
    execFileSync(OTAVA_PYTHON, [join(__dirname, 'otava-referee.py')], {
      input: JSON.stringify(request),
      timeout: timeoutMs,
      maxBuffer: 64 << 20,
    }).toString(),
  ) as T;
}

/**
 * 20 seeded series of 60 runs (σ 2 %): even ones step −10 % at run 20 and +8 % at run 40, odd ones
 * are flat. Seed 808 is H8's, 8081 H8b's.
 */
export function referenceSeries(seed = 808) {
  const rng = seededRng(seed);
  return Array.from({ length: 20 }, (_, s) =>
    driftSeries(rng, 60, 0, 0, 0.02).map((p, t) => {
      const factor = s % 2 === 1 ? 1 : t >= 40 ? 0.9 * 1.08 : t >= 20 ? 0.9 : 1;
      return { ...p, metrics: { ...p.metrics, throughputPerGpu: p.metrics.throughputPerGpu! * factor } };
    }),
  );
}

/** The log throughput each series' pass analyses: the values Otava reads. */
export const logsOf = (all: ReturnType<typeof referenceSeries>) =>
  all.map((pts) => pts.map((p) => Math.log(p.metrics.throughputPerGpu!)));
