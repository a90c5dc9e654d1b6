/** The results root is a cluster setting (shared storage the worker sees), carried by the plan. */
import { describe, expect, it } from 'vitest';
import { ConfigError, parseSweepConfig, planSweep } from '../src/index';
import { edit, SHIPPED, shippedText, stackEnv } from './helpers';

describe('clusters.<name>.resultsRoot', () => {
  it('an absolute results root reaches the plan; without one the plan has none (its hash unchanged)', () => {
    const text = edit(
      '    sharedDir: /lustre/infersweep/runs\n',
      '    sharedDir: /lustre/infersweep/runs\n    resultsRoot: /lustre/infersweep/results\n',
    );
    const { config, source } = parseSweepConfig(text, { file: SHIPPED, env: stackEnv });
    expect(planSweep(config, { orientation: 'latency', cluster: 'h200', source }).resultsRoot).toBe(
      '/lustre/infersweep/results',
    );
    const { config: plain } = parseSweepConfig(shippedText, { file: SHIPPED, env: stackEnv });
    expect(planSweep(plain, { orientation: 'latency', cluster: 'h200' })).not.toHaveProperty('resultsRoot');
  });

  it('a relative results root is refused at parse time, naming the field', () => {
    const text = edit(
      '    sharedDir: /lustre/infersweep/runs\n',
      '    sharedDir: /lustre/infersweep/runs\n    resultsRoot: results\n',
    );
    let err: unknown;
    try {
      parseSweepConfig(text, { file: SHIPPED, env: stackEnv });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).issues.map((i) => i.path)).toContain('clusters.h200.resultsRoot');
  });
});
