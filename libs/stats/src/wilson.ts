/** The Wilson score interval of a binomial proportion (good requests of all requests). */
import { normalQuantile } from './normal';

export interface ProportionInterval {
  successes: number;
  trials: number;
  estimate: number;
  lower: number;
  upper: number;
  level: number;
}

export function wilsonInterval(successes: number, trials: number, level = 0.95): ProportionInterval {
  if (!(trials > 0) || successes < 0 || successes > trials)
    throw new RangeError(`wilsonInterval: needs 0 ≤ successes ≤ trials and trials > 0, got ${successes}/${trials}`);
  const z = normalQuantile(1 - (1 - level) / 2);
  const p = successes / trials;
  const z2n = (z * z) / trials;
  const center = (p + z2n / 2) / (1 + z2n);
  const half = (z / (1 + z2n)) * Math.sqrt((p * (1 - p)) / trials + (z * z) / (4 * trials * trials));
  return {
    successes,
    trials,
    estimate: p,
    lower: Math.max(0, center - half),
    upper: Math.min(1, center + half),
    level,
  };
}
