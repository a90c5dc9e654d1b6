import { describe, expect, it } from 'vitest';
import { SECRET_LIKE } from '../../src/config/env';
import { planSecrets } from '../../src/plan/plan-secrets';
import { edit } from '../helpers';
import { draftOf } from './fixture';

describe('planSecrets', () => {
  it('returns the union of engine and cluster secret names, no values', () => {
    const text = edit(
      '  env:\n    PYTORCH_CUDA_ALLOC_CONF',
      '  secretEnv: [HF_TOKEN]\n  env:\n    PYTORCH_CUDA_ALLOC_CONF',
    ).replace(
      '    sharedDir: /lustre/infersweep/runs\n',
      '    sharedDir: /lustre/infersweep/runs\n    secretEnv: [HF_TOKEN, WANDB_API_KEY]\n',
    );
    const d = draftOf('latency', 'h200', text);
    expect(planSecrets(d)).toEqual(['HF_TOKEN', 'WANDB_API_KEY']);
    expect(d.issues.list).toEqual([]);
  });

  it('refuses a credential-like engine.env name, a name both plain and secret, and a derived name', () => {
    const text = edit(
      '  env:\n    PYTORCH_CUDA_ALLOC_CONF',
      '  secretEnv: [NCCL_CUMEM_ENABLE, VLLM_HOST_IP]\n  env:\n    MY_API_KEY: x\n    PYTORCH_CUDA_ALLOC_CONF',
    );
    const d = draftOf('latency', 'h200', text);
    planSecrets(d);
    expect(d.issues.list.map((i) => i.message.slice(0, 40))).toEqual([
      'looks like a credential: engine.env valu',
      'NCCL_CUMEM_ENABLE is also in engine.env;',
      'VLLM_HOST_IP is derived per node by the ',
    ]);
    expect(d.issues.list[0]!.value).toBe('"(value not shown)"');
  });

  it('SECRET_LIKE matches credential names, not ordinary ones', () => {
    for (const k of ['HF_TOKEN', 'AWS_SECRET_ACCESS_KEY', 'OPENAI_APIKEY', 'DB_PASSWORD'])
      expect(k).toMatch(SECRET_LIKE);
    for (const k of ['NCCL_CUMEM_ENABLE', 'PYTORCH_CUDA_ALLOC_CONF', 'VLLM_HOST_IP'])
      expect(k).not.toMatch(SECRET_LIKE);
  });
});
