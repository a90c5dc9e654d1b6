import { describe, expect, it } from 'vitest';
import { ConfigError, parseSweepConfig, searchSchema } from '../src/index';
import { edit, SHIPPED, stackEnv } from './helpers';

/** The shipped config with a `search:` block added to the balanced orientation. */
const withSearch = (block: string): string =>
  edit(
    '    concurrency: [4, 8, 16, 32]\n',
    `    concurrency: [4, 8, 16, 32]\n    search:\n${block.replace(/^/gm, '      ')}\n`,
  );

function configError(text: string): ConfigError {
  try {
    parseSweepConfig(text, { file: SHIPPED, env: stackEnv });
  } catch (e) {
    if (e instanceof ConfigError) return e;
    throw e;
  }
  throw new Error('expected a ConfigError');
}

describe('config: the search block', () => {
  it('parses an SLO-limit search with defaults', () => {
    const { config } = parseSweepConfig(
      withSearch('goal: slo-limit\nslo: { ttftMs: { p99: 2000 }, maxErrorRate: 0.01 }\nmaxConcurrency: 256'),
      { file: SHIPPED, env: stackEnv },
    );
    expect(config.orientations.balanced!.search).toEqual({
      goal: ['slo-limit'],
      slo: { ttftMs: { p99: 2000 }, maxErrorRate: 0.01 },
      minConcurrency: 1,
      maxConcurrency: 256,
      maxPoints: 12,
      resolution: { relative: 0.1 },
    });
  });

  it('both goals, an absolute resolution and a GPU-hour budget', () => {
    const s = searchSchema.parse({
      goal: ['slo-limit', 'frontier', 'frontier'],
      slo: { e2elMs: { p50: 30000 } },
      minConcurrency: 4,
      maxConcurrency: 128,
      maxPoints: 6,
      gpuHourBudget: 200,
      resolution: { absolute: 4 },
    });
    expect(s.goal).toEqual(['slo-limit', 'frontier']);
    expect(s.resolution).toEqual({ absolute: 4 });
  });

  it('errors name the field, the value and the fix, with the line', () => {
    const e = configError(withSearch('goal: slo-limit\nminConcurrency: 64\nmaxConcurrency: 32'));
    expect(e.message).toContain('orientations.balanced.search.maxConcurrency');
    expect(e.message).toContain('minConcurrency must be ≤ maxConcurrency');
    expect(e.message).toContain('goal slo-limit needs an slo block, e.g. slo: { ttftMs: { p99: 2000 }');
    expect(e.message).toMatch(/\(line \d+\)/);
    const unknown = configError(withSearch('goal: knee\nmaxConcurrency: 32'));
    expect(unknown.message).toContain('orientations.balanced.search.goal');
    expect(unknown.message).toContain('"knee" — goal is slo-limit, frontier or a list of both');
    const emptySlo = configError(withSearch('goal: slo-limit\nslo: {}\nmaxConcurrency: 32'));
    expect(emptySlo.message).toContain('an SLO needs at least one bound');
    const pct = configError(withSearch('goal: slo-limit\nslo: { ttftMs: { p95: 100 } }\nmaxConcurrency: 32'));
    expect(pct.message).toContain('orientations.balanced.search.slo.ttftMs');
    expect(pct.message).toContain('p95');
    const rel = configError(withSearch('goal: frontier\nmaxConcurrency: 32\nresolution: { relative: 2 }'));
    expect(rel.message).toContain('orientations.balanced.search.resolution');
  });
});
