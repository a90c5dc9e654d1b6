/** Small deterministic PRNGs (pure). Same seed → same sequence on every platform. */
import { mulberry32 } from '@infersweep/stats';

/** 32-bit string/number mix (FNV-1a) for deriving seeds from identifiers. */
export function hash32(...parts: Array<string | number>): number {
  let h = 0x811c9dc5;
  for (const p of parts) {
    const s = typeof p === 'number' ? `#${p}` : `$${p}`;
    for (let i = 0; i < s.length; i++) {
      h ^= s.charCodeAt(i);
      h = Math.imul(h, 0x01000193) >>> 0;
    }
  }
  return h >>> 0;
}

export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Integer in [lo, hi] inclusive. */
  int(lo: number, hi: number): number;
  /** Log-normal with the given median and sigma (of the underlying normal). */
  lognormal(median: number, sigma: number): number;
  chance(p: number): boolean;
}

/** mulberry32: tiny, fast, good enough for workload shapes (not for cryptography). */
export function rng(seed: number): Rng {
  const next = mulberry32(seed);
  const normal = (): number => {
    const u = Math.max(next(), 1e-12);
    const v = next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  };
  return {
    next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    lognormal: (median, sigma) => median * Math.exp(sigma * normal()),
    chance: (p) => next() < p,
  };
}
