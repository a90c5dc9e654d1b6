import { parseSweepConfig } from '../../src/index';
import { openDraft, type PlanDraft } from '../../src/plan/draft';
import { ConfigError } from '../../src/config/errors';
import { SHIPPED, shippedText, stackEnv } from '../helpers';

/** A plan draft of the shipped config (or an edit of its text) for one orientation and cluster. */
export function draftOf(orientation: string, cluster = 'h200', text = shippedText, points?: number[]): PlanDraft {
  const { config, source } = parseSweepConfig(text, { file: SHIPPED, env: stackEnv });
  return openDraft(config, { orientation, cluster, source, ...(points ? { points } : {}) });
}

/** The ConfigError `run` throws (fails the test when it throws nothing or something else). */
export function configErrorOf(run: () => unknown): ConfigError {
  try {
    run();
  } catch (e) {
    if (e instanceof ConfigError) return e;
    throw e;
  }
  throw new Error('expected a ConfigError');
}
