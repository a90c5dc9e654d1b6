/**
 * Site rules in the pure config/plan layer: secrets are names only and never reach the
 * plan; a credential typed into engine.env is refused; cluster paths are absolute.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, parseSweepConfig, planSweep } from '../src/index';
import { edit, SHIPPED, shippedText, stackEnv } from './helpers';

function errorOf(text: string, plan?: { orientation: string; cluster: string }): ConfigError {
  try {
    const { config, source } = parseSweepConfig(text, { file: SHIPPED, env: stackEnv });
    if (plan) planSweep(config, { ...plan, source });
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return e as ConfigError;
  }
  throw new Error('expected a ConfigError');
}
const lineOf = (text: string, needle: string) => text.split('\n').findIndex((l) => l.includes(needle)) + 1;

describe('secrets are names in the config and the plan, never values', () => {
  const withSecrets = edit(
    '  env:\n    PYTORCH_CUDA_ALLOC_CONF',
    '  secretEnv: [HF_TOKEN]\n  env:\n    PYTORCH_CUDA_ALLOC_CONF',
  ).replace(
    '    sharedDir: /lustre/infersweep/runs\n',
    '    sharedDir: /lustre/infersweep/runs\n    secretEnv: [WANDB_API_KEY]\n    secretsFile: /etc/infersweep/h200.secrets\n',
  );

  it('the plan carries the names (engine + cluster) and where the worker finds values; no node env holds them', () => {
    const { config, source } = parseSweepConfig(withSecrets, {
      file: SHIPPED,
      env: { ...stackEnv, HF_TOKEN: 'hf_canary_value' },
    });
    const plan = planSweep(config, { orientation: 'latency', cluster: 'h200', source });
    expect(plan.secretEnv).toEqual(['HF_TOKEN', 'WANDB_API_KEY']);
    expect(plan.secretsFile).toBe('/etc/infersweep/h200.secrets');
    for (const n of plan.nodes) expect(Object.keys(n.env)).not.toContain('HF_TOKEN');
    expect(JSON.stringify(plan)).not.toContain('hf_canary_value');
    // a plan without secrets has no such fields (its hash is what it was)
    const { config: plain } = parseSweepConfig(shippedText, { file: SHIPPED, env: stackEnv });
    expect(planSweep(plain, { orientation: 'latency', cluster: 'h200' })).not.toHaveProperty('secretEnv');
  });

  it('HF_TOKEN: ${HF_TOKEN} in engine.env is refused with the fix, the line and without the value', () => {
    const text = edit('    NCCL_CUMEM_ENABLE: "1"\n', '    NCCL_CUMEM_ENABLE: "1"\n    HF_TOKEN: ${HF_TOKEN}\n');
    let e: ConfigError | undefined;
    try {
      const { config, source } = parseSweepConfig(text, {
        file: SHIPPED,
        env: { ...stackEnv, HF_TOKEN: 'hf_canary_value' },
      });
      planSweep(config, { orientation: 'latency', cluster: 'h200', source });
    } catch (x) {
      e = x as ConfigError;
    }
    expect(e).toBeInstanceOf(ConfigError);
    // refused as it is read: the placeholder is never expanded (plan time would refuse the name too)
    expect(e!.message).toContain('engine.env.HF_TOKEN: "${HF_TOKEN}" — ${HF_TOKEN} names a secret');
    expect(e!.message).toContain('engine.secretEnv');
    expect(e!.message).not.toContain('hf_canary_value');
    expect(e!.issues[0]!.line).toBe(lineOf(text, 'HF_TOKEN: ${HF_TOKEN}'));
  });

  it('a secret placeholder in argv is never expanded: a credential-like name, or any name a secretEnv declares', () => {
    const env = { ...stackEnv, VLLM_API_KEY: 'vk_canary', WANDB_KEY: 'wb_canary' };
    const text = edit(
      '  commonArgs:\n',
      '  secretEnv: [WANDB_KEY]\n  commonArgs:\n    - --api-key=${VLLM_API_KEY}\n    - --wandb=${WANDB_KEY:-none}\n',
    );
    let e: ConfigError | undefined;
    try {
      parseSweepConfig(text, { file: SHIPPED, env });
    } catch (x) {
      e = x as ConfigError;
    }
    expect(e).toBeInstanceOf(ConfigError);
    expect(e!.issues.map((i) => i.path)).toEqual(['engine.commonArgs[0]', 'engine.commonArgs[1]']);
    expect(e!.message).toContain('${VLLM_API_KEY} names a secret');
    expect(e!.message).toContain('${WANDB_KEY} names a secret');
    expect(e!.message).not.toMatch(/vk_canary|wb_canary/);
  });

  it('a name that is both plain and secret, a derived name, a malformed name, a value in place of a name', () => {
    const both = edit(
      '  env:\n    PYTORCH_CUDA_ALLOC_CONF',
      '  secretEnv: [NCCL_CUMEM_ENABLE, VLLM_HOST_IP]\n  env:\n    PYTORCH_CUDA_ALLOC_CONF',
    );
    const m = errorOf(both, { orientation: 'latency', cluster: 'h200' }).message;
    expect(m).toContain('NCCL_CUMEM_ENABLE is also in engine.env');
    expect(m).toContain('VLLM_HOST_IP is derived per node');
    const bad = errorOf(
      edit(
        '  env:\n    PYTORCH_CUDA_ALLOC_CONF',
        '  secretEnv: ["HF_TOKEN=hf_x"]\n  env:\n    PYTORCH_CUDA_ALLOC_CONF',
      ),
    );
    expect(bad.message).toMatch(
      /engine\.secretEnv\[0\]: "HF_TOKEN=hf_x" — secret names are environment variable names .*names only/,
    );
  });
});

describe('paths on the cluster are absolute', () => {
  it('relative sharedDir, ~ squashDir and a relative mount fail at parse time with their lines', () => {
    const text = edit('    sharedDir: /lustre/infersweep/runs', '    sharedDir: infersweep/runs')
      .replace('    squashDir: /lustre/infersweep/squash', '    squashDir: ~/squash')
      .replace('      - /models:/models:ro', '      - models:/models:ro');
    const e = errorOf(text);
    const byPath = Object.fromEntries(e.issues.map((i) => [i.path, i]));
    expect(byPath['clusters.h200.sharedDir']!.message).toMatch(/must be an absolute path on the cluster/);
    expect(byPath['clusters.h200.sharedDir']!.line).toBe(lineOf(text, 'sharedDir: infersweep/runs'));
    expect(byPath['clusters.h200.squashDir']!.line).toBe(lineOf(text, 'squashDir: ~/squash'));
    expect(byPath['clusters.h200.mounts[0]']!.message).toMatch(/absolute src and dst/);
  });
});
