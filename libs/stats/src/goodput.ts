/**
 * Goodput attainment (DistServe, as aiperf and GuideLLM use it): a request is good when it succeeded
 * and its TTFT, TPOT and end-to-end latency all meet their bounds; attainment is the good share, with
 * a Wilson interval.
 */
import { wilsonInterval, type ProportionInterval } from './wilson';

export interface RequestLatency {
  ok: boolean;
  ttftMs?: number;
  /** time per output token after the first */
  tpotMs?: number;
  e2elMs?: number;
}

export interface GoodputBounds {
  ttftMs?: number;
  tpotMs?: number;
  e2elMs?: number;
}

const FIELDS = ['ttftMs', 'tpotMs', 'e2elMs'] as const;

/** Good: succeeded and every given bound holds (a bounded value that was not measured is not good). */
export function isGoodRequest(r: RequestLatency, bounds: GoodputBounds): boolean {
  if (!r.ok) return false;
  return FIELDS.every((f) => {
    const bound = bounds[f];
    if (bound === undefined) return true;
    const v = r[f];
    return v !== undefined && Number.isFinite(v) && v <= bound;
  });
}

export function goodput(requests: readonly RequestLatency[], bounds: GoodputBounds, level = 0.95): ProportionInterval {
  if (FIELDS.every((f) => bounds[f] === undefined))
    throw new RangeError('goodput: give at least one of ttftMs, tpotMs, e2elMs');
  const good = requests.filter((r) => isGoodRequest(r, bounds)).length;
  return wilsonInterval(good, requests.length, level);
}
