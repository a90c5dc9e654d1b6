/**
 * The knee of throughput per GPU against concurrency: where doubling concurrency suddenly stops
 * paying. On the isotonic (non-decreasing) fit of log throughput against log concurrency, the
 * elasticity of each segment is Δ log T / Δ log c; a knee is an interior point where it falls by at
 * least `minDrop` (0.5) from the segment before to the segment after. Smooth saturation spreads that
 * fall over many doublings and has no knee (docs/statistics.md §3).
 */
import { isotonic } from './isotonic';

export const MIN_DROP = 0.5;

export interface KneeResult {
  /** the point of the largest fall, or null: "no knee" */
  knee: number | null;
  /** every point whose fall reaches minDrop */
  candidates: number[];
  /** each interior point's fall in elasticity */
  drops: { concurrency: number; drop: number }[];
}

export function knee(points: readonly { concurrency: number; throughput: number }[], minDrop = MIN_DROP): KneeResult {
  const pts = [...points].sort((a, b) => a.concurrency - b.concurrency);
  if (pts.some((p) => !(p.throughput > 0) || !(p.concurrency > 0)))
    throw new RangeError('knee: concurrency and throughput must be positive');
  if (new Set(pts.map((p) => p.concurrency)).size !== pts.length)
    throw new RangeError('knee: one value per concurrency');
  if (pts.length < 3) return { knee: null, candidates: [], drops: [] };
  const logC = pts.map((p) => Math.log(p.concurrency));
  const fit = isotonic(pts.map((p) => Math.log(p.throughput)));
  const elasticity = fit.slice(1).map((f, j) => (f - fit[j]!) / (logC[j + 1]! - logC[j]!));
  const drops = elasticity.slice(1).map((e, j) => ({ concurrency: pts[j + 1]!.concurrency, drop: elasticity[j]! - e }));
  const candidates = drops.filter((d) => d.drop >= minDrop);
  const best = candidates.reduce<(typeof drops)[0] | null>((b, d) => (!b || d.drop > b.drop ? d : b), null);
  return { knee: best?.concurrency ?? null, candidates: candidates.map((d) => d.concurrency), drops };
}
