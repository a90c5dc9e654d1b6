/** Multiplicity control across a night's family of tests: Benjamini–Hochberg (FDR) and Holm (FWER). */

export interface FamilyDecision {
  /** adjusted p-values, in the input order (compare with the level) */
  adjusted: number[];
  rejected: boolean[];
}

function order(ps: readonly number[]): number[] {
  return ps.map((_, i) => i).sort((a, b) => ps[a]! - ps[b]! || a - b);
}

/** BH step-up at level q: adjusted p_(i) = min_{j ≥ i} m p_(j) / j. */
export function benjaminiHochberg(ps: readonly number[], q = 0.05): FamilyDecision {
  const m = ps.length;
  const idx = order(ps);
  const adjusted = new Array<number>(m);
  let running = 1;
  for (let r = m - 1; r >= 0; r--) {
    const i = idx[r]!;
    running = Math.min(running, (ps[i]! * m) / (r + 1));
    adjusted[i] = running;
  }
  return { adjusted, rejected: adjusted.map((a) => a <= q) };
}

/** Holm step-down at level alpha: adjusted p_(i) = max_{j ≤ i} (m − j + 1) p_(j). */
export function holm(ps: readonly number[], alpha = 0.05): FamilyDecision {
  const m = ps.length;
  const idx = order(ps);
  const adjusted = new Array<number>(m);
  let running = 0;
  idx.forEach((i, r) => {
    running = Math.max(running, Math.min(1, (m - r) * ps[i]!));
    adjusted[i] = running;
  });
  return { adjusted, rejected: adjusted.map((a) => a <= alpha) };
}
