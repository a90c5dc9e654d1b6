/** The magnitude gate: a change must be large enough to matter, relative to the series' own noise. */

export interface GateSettings {
  /** the smallest change that counts, on the log scale (≈ relative), default 0.05 */
  minRelative?: number;
  /** and at least this many run-SDs of the series, default 2 */
  sigmas?: number;
}

/** The smallest |log change| that counts for a series of run-SD `sigma` (log scale). */
export function gateThreshold(sigma: number, s: GateSettings = {}): number {
  return Math.max(s.minRelative ?? 0.05, (s.sigmas ?? 2) * (Number.isFinite(sigma) ? sigma : 0));
}

export function passesGate(effect: number, sigma: number, s: GateSettings = {}): boolean {
  return Math.abs(effect) >= gateThreshold(sigma, s);
}
