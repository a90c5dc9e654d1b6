import { FAMILIES, type EngineFamily } from './families';
import { parsePrometheus, sumMetric, PrometheusParseError } from './prometheus';

/**
 * Drain gate state machine (pure). Idle = every busy gauge sums to 0 over every endpoint for
 * `idlePolls` consecutive polls. A failed scrape resets the streak; a missing required metric fails
 * (the gate cannot tell, and "absent" must never read as "idle").
 */
export type DrainObservation =
  | { kind: 'ok'; busy: number; perEndpoint: Record<string, number> }
  | { kind: 'scrape-error'; endpoint: string; message: string }
  | { kind: 'missing-metric'; endpoint: string; metric: string };

export interface DrainState {
  polls: number;
  streak: number;
  outcome: 'pending' | 'idle' | 'failed';
  reason: string | null;
}

export const initialDrainState: DrainState = { polls: 0, streak: 0, outcome: 'pending', reason: null };

export function drainStep(state: DrainState, obs: DrainObservation, idlePolls: number): DrainState {
  if (state.outcome !== 'pending') return state;
  const polls = state.polls + 1;
  switch (obs.kind) {
    case 'ok': {
      const streak = obs.busy === 0 ? state.streak + 1 : 0;
      return { polls, streak, outcome: streak >= idlePolls ? 'idle' : 'pending', reason: null };
    }
    case 'scrape-error':
      return { polls, streak: 0, outcome: 'pending', reason: `scrape of ${obs.endpoint} failed: ${obs.message}` };
    case 'missing-metric':
      return {
        polls,
        streak: 0,
        outcome: 'failed',
        reason: `${obs.endpoint}: required metric ${obs.metric} is absent`,
      };
  }
}

/** Turn one poll's scrape results (text or error per endpoint) into an observation (pure). */
export function observeDrain(
  results: Array<{ endpoint: string; text?: string; error?: string }>,
  family: EngineFamily = 'vllm',
): DrainObservation {
  const spec = FAMILIES[family];
  let busy = 0;
  const perEndpoint: Record<string, number> = {};
  for (const r of results) {
    if (r.error !== undefined || r.text === undefined)
      return { kind: 'scrape-error', endpoint: r.endpoint, message: r.error ?? 'no body' };
    let samples;
    try {
      samples = parsePrometheus(r.text).samples;
    } catch (err) {
      const msg = err instanceof PrometheusParseError ? err.message : String(err);
      return { kind: 'scrape-error', endpoint: r.endpoint, message: `unparseable /metrics: ${msg}` };
    }
    let ep = 0;
    for (const g of spec.busyGauges) {
      const v = sumMetric(samples, g);
      if (v === null) return { kind: 'missing-metric', endpoint: r.endpoint, metric: g };
      ep += v;
    }
    for (const g of spec.optionalBusyGauges) ep += sumMetric(samples, g) ?? 0;
    perEndpoint[r.endpoint] = ep;
    busy += ep;
  }
  return { kind: 'ok', busy, perEndpoint };
}
