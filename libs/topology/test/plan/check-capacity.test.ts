import { describe, expect, it } from 'vitest';
import { checkCapacity } from '../../src/plan/check-capacity';
import { deriveEngineSettings } from '../../src/plan/derive-engine-settings';
import { planAgentx } from '../../src/plan/plan-agentx';
import { resolveTopology } from '../../src/plan/resolve-topology';
import { selectPoints } from '../../src/plan/select-points';
import { edit, shippedText } from '../helpers';
import { configErrorOf, draftOf } from './fixture';

function capacityOf(orientation: string, cluster: string, text = shippedText, force = false) {
  const d = draftOf(orientation, cluster, text);
  d.opts.force = force;
  const topology = resolveTopology(d);
  const { agentx } = planAgentx(d);
  const points = selectPoints(d);
  const settings = deriveEngineSettings(d, topology, points, agentx);
  return { d, run: () => checkCapacity(d, { topology, settings, agentx, points }) };
}

describe('checkCapacity', () => {
  it('the shipped balanced orientation is checked and fits', () => {
    const c = capacityOf('balanced', 'h200').run();
    expect(c).toMatchObject({ checked: true, forced: false });
    expect(c.checked && c.verdict).not.toBe('refuse');
  });

  it('unchecked, with the reason, on a GPU without a known memory size', () => {
    expect(capacityOf('latency', 'local').run()).toEqual({
      checked: false,
      reason: 'GPU "fake" has no known memory size (known: H100, H200, B200, GB200, B300, GB300)',
    });
  });

  it('a refusal is a ConfigError at model.architecture; --force keeps it as warnings', () => {
    const heavy = edit('weightBytes: 1.534e12', 'weightBytes: 1.5e13');
    const e = configErrorOf(capacityOf('balanced', 'h200', heavy).run);
    expect(e.issues[0]!.path).toBe('model.architecture');
    expect(e.issues[0]!.message).toContain('or plan with --force');
    const forced = capacityOf('balanced', 'h200', heavy, true);
    expect(forced.run()).toMatchObject({ checked: true, verdict: 'refuse', forced: true });
    expect(forced.d.warnings.some((w) => w.startsWith('capacity (forced): '))).toBe(true);
  });
});
