/**
 * A seeded pseudo-random generator (mulberry32: 32-bit state, period 2³², passes the usual small-crush
 * batteries well enough for Monte-Carlo of a few million draws). Every simulation, bootstrap and
 * permutation in this library draws from it, so a seed reproduces a result bit for bit.
 */
export interface Rng {
  /** uniform in [0, 1) */
  next(): number;
  /** standard normal (Box–Muller) */
  normal(): number;
  /** uniform integer in [0, n) */
  int(n: number): number;
}

/** mulberry32's uniform stream in [0, 1): the one implementation in the repository. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function seededRng(seed: number): Rng {
  let spare: number | undefined;
  const next = mulberry32(seed);
  const normal = (): number => {
    if (spare !== undefined) {
      const s = spare;
      spare = undefined;
      return s;
    }
    const u = 1 - next(); // (0, 1]: log(u) is finite
    const r = Math.sqrt(-2 * Math.log(u));
    const phi = 2 * Math.PI * next();
    spare = r * Math.sin(phi);
    return r * Math.cos(phi);
  };
  return { next, normal, int: (n) => Math.floor(next() * n) };
}

/** Fisher–Yates shuffle of `xs` in place. */
export function shuffleInPlace<T>(xs: T[], rng: Rng, from = 0, to = xs.length): void {
  for (let i = to - 1; i > from; i--) {
    const j = from + rng.int(i - from + 1);
    [xs[i], xs[j]] = [xs[j]!, xs[i]!];
  }
}
