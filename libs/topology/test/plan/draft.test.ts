import { describe, expect, it } from 'vitest';
import { parseSweepConfig } from '../../src/index';
import { Issues, openDraft } from '../../src/plan/draft';
import { SHIPPED, shippedText, stackEnv } from '../helpers';
import { configErrorOf, draftOf } from './fixture';

describe('openDraft', () => {
  it('opens a draft with the orientation, its config paths, the cluster profile and the recipe context', () => {
    const d = draftOf('balanced');
    expect(d.oPath).toEqual(['orientations', 'balanced']);
    expect(d.tPath).toEqual(['orientations', 'balanced', 'topology']);
    expect(d.spec).toMatchObject({ tp: 4, pp: 2, dp: 2, ep: 8 });
    expect(d.cluster.gpu).toBe('H200');
    expect(d.recipe?.family).toBe('kimi-k3');
    expect(d.modelDefaultContext).toBe(1048576);
    expect(d.issues.list).toEqual([]);
  });

  it('an unknown orientation and an unknown cluster are both reported, with what exists', () => {
    const { config, source } = parseSweepConfig(shippedText, { file: SHIPPED, env: stackEnv });
    const e = configErrorOf(() => openDraft(config, { orientation: 'nope', cluster: 'mars', source }));
    expect(e.issues.map((i) => i.path)).toEqual(['orientations', 'clusters']);
    expect(e.message).toContain('no orientation "nope" (have: latency, balanced, throughput');
    expect(e.message).toContain('no cluster profile "mars" (have: h200, local)');
  });
});

describe('Issues', () => {
  it('collects problems and throws them together, in the order found', () => {
    const issues = new Issues(undefined);
    expect(() => issues.throwIfAny()).not.toThrow();
    issues.add(['engine', 'version'], '0.1', 'too old');
    issues.add(['a', 0], 1, 'second');
    const e = configErrorOf(() => issues.throwIfAny());
    expect(e.issues.map((i) => [i.path, i.message])).toEqual([
      ['engine.version', 'too old'],
      ['a[0]', 'second'],
    ]);
  });
});
