import { describe, expect, it } from 'vitest';
import { planSweep } from '../../src/plan/plan';
import { edit } from '../helpers';
import { configErrorOf, draftOf } from './fixture';

describe('planSweep: the steps in order', () => {
  it('problems found by the checks before the points are reported together, in step order', () => {
    // engine (removed variable), secrets (credential-like name), recipe (vLLM too old), points (not in the list)
    const text = edit('version: 0.27.1', 'version: 0.10.0').replace(
      '    NCCL_CUMEM_ENABLE: "1"\n',
      '    NCCL_CUMEM_ENABLE: "1"\n    VLLM_RPC_TIMEOUT: "1"\n    HF_TOKEN: x\n',
    );
    const { config, opts } = draftOf('latency', 'h200', text, [3]);
    const e = configErrorOf(() => planSweep(config, opts));
    expect(e.issues.map((i) => i.path)).toEqual([
      'engine.env.VLLM_RPC_TIMEOUT',
      'engine.env.HF_TOKEN',
      'engine.version',
      'orientations.latency.concurrency',
    ]);
  });

  it('warnings and notes of every step reach the plan', () => {
    const { config, opts } = draftOf('balanced', 'h200');
    const plan = planSweep(config, opts);
    expect(plan.warnings.join('\n')).toContain('experimental on H200: DP2×EP8');
    expect(plan.notes.join('\n')).toContain('inter-node firewalls must allow all TCP');
  });
});
