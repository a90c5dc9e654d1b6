import { describe, expect, it } from 'vitest';
import { checkEngine } from '../../src/plan/check-engine';
import { resolveTopology } from '../../src/plan/resolve-topology';
import { edit } from '../helpers';
import { draftOf } from './fixture';

function checked(orientation: string, text?: string) {
  const d = draftOf(orientation, 'h200', text);
  checkEngine(d, resolveTopology(d));
  return d;
}

describe('checkEngine', () => {
  it('the shipped engine passes', () => {
    expect(checked('balanced').issues.list).toEqual([]);
  });

  it('environment variables vLLM removed are refused with the fix', () => {
    const text = edit(
      '    NCCL_CUMEM_ENABLE: "1"\n',
      '    NCCL_CUMEM_ENABLE: "1"\n    VLLM_RPC_TIMEOUT: "100"\n    VLLM_ALL2ALL_BACKEND: x\n',
    );
    const issues = checked('balanced', text).issues.list;
    expect(issues.map((i) => i.path)).toEqual(['engine.env.VLLM_RPC_TIMEOUT', 'engine.env.VLLM_ALL2ALL_BACKEND']);
    expect(issues[1]!.message).toContain('set engine.all2allBackend instead');
  });

  it('EPLB without expert parallelism is refused (rule 7); an all-to-all backend without EP is a warning (rule 8)', () => {
    const text = edit(
      '  allowUnvalidated: false\n',
      '  allowUnvalidated: false\n  eplb: {}\n  all2allBackend: deepep_low_latency\n',
    );
    const d = checked('latency', text);
    expect(d.issues.list.map((i) => i.path)).toEqual(['engine.eplb']);
    expect(d.warnings.join('\n')).toContain('all2allBackend deepep_low_latency is not emitted');
  });

  it('the removed pplx backend is refused', () => {
    const text = edit('  allowUnvalidated: false\n', '  allowUnvalidated: false\n  all2allBackend: pplx\n');
    expect(checked('balanced', text).issues.list[0]!.message).toContain('removed from vLLM (falls back silently)');
  });
});
