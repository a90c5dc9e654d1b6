import { describe, expect, it } from 'vitest';
import { deriveEngineSettings } from '../../src/plan/derive-engine-settings';
import { planAgentx } from '../../src/plan/plan-agentx';
import { resolveTopology } from '../../src/plan/resolve-topology';
import { edit } from '../helpers';
import { configErrorOf, draftOf } from './fixture';

describe('deriveEngineSettings', () => {
  it('derives maxNumSeqs per DP rank and fills the AgentX defaults that follow from the settings', () => {
    const d = draftOf('balanced');
    const { agentx } = planAgentx(d);
    expect(agentx.requireCachedTokens).toBeUndefined();
    const es = deriveEngineSettings(d, resolveTopology(d), [4, 8, 16, 32], agentx);
    expect(es.maxNumSeqs).toBe(16);
    expect(es.maxNumSeqsDerivation).toBe('⌈32 / DP 2⌉ = 16');
    expect(agentx.requireCachedTokens).toBe(true);
    expect(agentx.aiperf.publicDataset).toBeDefined();
  });

  it('aiperf on the head node is planned (the point activity runs it as an srun --overlap step there)', () => {
    const text = edit(
      '  profileDurationSeconds: 3600 ',
      '  client: aiperf\n  aiperf: { runOn: head-node }\n  profileDurationSeconds: 3600 ',
    );
    const d = draftOf('balanced', 'h200', text);
    const { agentx } = planAgentx(d);
    deriveEngineSettings(d, resolveTopology(d), [4], agentx);
    expect(agentx.aiperf.runOn).toBe('head-node');
    expect(d.issues.list).toEqual([]);
  });

  it('aiperf on the head node under pyxis needs sharedDir mounted at the same path in the container', () => {
    const text = edit(
      '  profileDurationSeconds: 3600 ',
      '  client: aiperf\n  aiperf: { runOn: head-node }\n  profileDurationSeconds: 3600 ',
    );
    const unmounted = text.replace('      - /lustre/infersweep:/lustre/infersweep\n', '');
    expect(unmounted).not.toBe(text);
    const d = draftOf('balanced', 'h200', unmounted);
    const { agentx } = planAgentx(d);
    const e = configErrorOf(() => deriveEngineSettings(d, resolveTopology(d), [4], agentx));
    expect(e.issues.map((i) => i.path)).toEqual(['clusters.h200.mounts']);
    expect(e.message).toContain('/lustre/infersweep/runs');
  });
});
