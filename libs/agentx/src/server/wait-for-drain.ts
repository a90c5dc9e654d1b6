import { setTimeout as delay } from 'node:timers/promises';
import { DrainTimeout, MetricMissingError, PointAbortedError } from '../errors';
import { drainStep, initialDrainState, observeDrain, type DrainObservation } from './drain';
import type { EngineFamily } from './families';
import { scrapeText } from './scrape';

export interface DrainOptions {
  pollSeconds: number;
  idlePolls: number;
  deadlineSeconds: number;
  scrapeTimeoutSeconds: number;
  family?: EngineFamily;
}

export interface DrainPoll {
  poll: number;
  streak: number;
  observation: DrainObservation;
  elapsedSeconds: number;
}

/**
 * Between-point drain gate (agentx-inferencex.md §2.3, R5). Polls every metrics endpoint until the busy
 * gauges read 0 for `idlePolls` consecutive polls. Scrape errors reset the streak; a missing required
 * metric throws MetricMissingError; the deadline throws DrainTimeout (retryable).
 */
export async function waitForDrain(
  metricsEndpoints: string[],
  opts: DrainOptions,
  hooks: { onPoll?(p: DrainPoll): void; signal?: AbortSignal } = {},
): Promise<{ polls: number; waitedSeconds: number }> {
  if (metricsEndpoints.length === 0)
    throw new MetricMissingError('drain gate: no metrics endpoints given', { step: 'drain' });
  const t0 = performance.now();
  const deadline = t0 + opts.deadlineSeconds * 1000;
  let state = initialDrainState;
  for (;;) {
    if (hooks.signal?.aborted) throw new PointAbortedError('drain gate aborted', { step: 'drain' });
    const results = await Promise.all(
      metricsEndpoints.map(async (endpoint) => {
        try {
          return { endpoint, text: await scrapeText(endpoint, opts.scrapeTimeoutSeconds, hooks.signal) };
        } catch (err) {
          return { endpoint, error: (err as Error).message };
        }
      }),
    );
    const obs = observeDrain(results, opts.family ?? 'vllm');
    state = drainStep(state, obs, opts.idlePolls);
    const elapsedSeconds = (performance.now() - t0) / 1000;
    hooks.onPoll?.({ poll: state.polls, streak: state.streak, observation: obs, elapsedSeconds });
    if (state.outcome === 'idle') return { polls: state.polls, waitedSeconds: elapsedSeconds };
    if (state.outcome === 'failed')
      throw new MetricMissingError(`drain gate: ${state.reason ?? 'required metric absent'}`, {
        step: 'drain',
        polls: state.polls,
      });
    const next = performance.now() + opts.pollSeconds * 1000;
    if (next > deadline)
      throw new DrainTimeout(
        `deployment did not drain within ${opts.deadlineSeconds} s (${state.polls} polls; last: ${
          obs.kind === 'ok' ? `busy=${obs.busy}` : (state.reason ?? obs.kind)
        })`,
        { polls: state.polls, lastObservation: obs },
      );
    try {
      await delay(opts.pollSeconds * 1000, undefined, { signal: hooks.signal });
    } catch {
      throw new PointAbortedError('drain gate aborted', { step: 'drain' });
    }
  }
}
