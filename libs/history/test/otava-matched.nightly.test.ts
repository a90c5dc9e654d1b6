/**
 * H8b (b), registered in docs/history.md before it ran: libs/stats `eDivisive` and Apache Otava's
 * E-divisive at the same settings — any non-empty segment (min size 1), 9999 permutations, α 0.05 —
 * find the same change points (count and indices) on the 20 new series (seed 8081). Both p-values are
 * Monte-Carlo estimates from independent streams (SD ≈ 0.0022 at α), so a candidate within a few SDs
 * of α could go either way: expected P(all 20 agree) ≈ 94 %; a disagreement is printed with both
 * p-values. Nightly: Otava's 9999 permutations take minutes.
 * Also printed, not targeted: the shipped pass (min 5 runs a side, 199 permutations) on the same series.
 */
import { describe, expect, it } from 'vitest';
import { analyzeWhole } from '@infersweep/history';
import { eDivisive, seededRng } from '@infersweep/stats';
import { SIM_SETTINGS } from '@infersweep/testkit/nights-fixture';
import { logsOf, otava, referenceSeries } from './otava-fixture';

const PERMUTATIONS = 9999;

describe('E-divisive against Apache Otava at the same settings (H8b b)', () => {
  it('finds the same change points on all 20 new series', () => {
    const all = referenceSeries(8081);
    const logs = logsOf(all);
    const started = Date.now();
    const theirs = otava<[number, number][][]>(
      { mode: 'changepoints', series: logs, permutations: PERMUTATIONS, seedBase: 5000 },
      900_000,
    );
    const otavaMs = Date.now() - started;
    const ours = logs.map((xs, s) =>
      eDivisive(xs, { rng: seededRng(9000 + s), permutations: PERMUTATIONS, minSize: 1, alpha: 0.05 }).map(
        (c): [number, number] => [c.index, c.pValue],
      ),
    );
    const shipped = all.map((pts) =>
      analyzeWhole(pts, 'throughputPerGpu', SIM_SETTINGS).changePoints.map((c) => c.index),
    );
    const idx = (cps: [number, number][]) => cps.map(([i]) => i);
    const differ = logs
      .map((_, s) => s)
      .filter((s) => JSON.stringify(idx(ours[s]!)) !== JSON.stringify(idx(theirs[s]!)))
      .map((s) => `series ${s}: ours ${JSON.stringify(ours[s])}, Otava ${JSON.stringify(theirs[s])}`);
    console.log(
      [
        `H8b (b): ${20 - differ.length} of 20 series agree (Otava ${(otavaMs / 1000).toFixed(0)} s, ours ${((Date.now() - started - otavaMs) / 1000).toFixed(0)} s)`,
        `ours   ${JSON.stringify(ours.map(idx))}`,
        `Otava  ${JSON.stringify(theirs.map(idx))}`,
        `shipped pass (min 5, 199 permutations) ${JSON.stringify(shipped)}`,
        ...differ,
      ].join('\n'),
    );
    expect(theirs).toHaveLength(20);
    expect(differ).toEqual([]);
  }, 1_200_000);
});
