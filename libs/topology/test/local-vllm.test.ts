import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  bindPlan,
  cpuDifferences,
  cpuLaunch,
  parseSweepConfig,
  planContentHash,
  planSweep,
  removeFlag,
  sweepPlanSchema,
  type VllmCpuOverride,
} from '../src/index';

/** configs/tiny-moe-local-vllm.yaml: the bash runner's shapes at one "GPU" per node on vLLM's CPU build. */
const FILE = 'configs/tiny-moe-local-vllm.yaml';
const text = readFileSync(fileURLToPath(new URL(`../../../${FILE}`, import.meta.url)), 'utf8');
const env = { INFERSWEEP_STACK: '/stack', INFERSWEEP_TOOLS: '/tools' };
const load = (t = text) => parseSweepConfig(t, { file: FILE, env, clusters: ['local-vllm'] });
const { config, source } = load();
const plan = (orientation: string) => planSweep(config, { orientation, cluster: 'local-vllm', source });
const ORIENTATIONS = ['latency', 'balanced', 'throughput', 'tp'];
const KV = ['--load-format', 'dummy', '--kv-cache-memory-bytes', '268435456'];
const addedFor = (pp: number) => [
  ...KV,
  ...(pp > 1 ? ['--compilation-config', '{"mode":2,"backend":"eager"}'] : ['--enforce-eager']),
];

describe(`${FILE} on local-vllm`, () => {
  it('each node launches the planner argv, changed only by executable, model path, the GPU-memory flag and the CPU additions', () => {
    for (const o of ORIENTATIONS) {
      const p = plan(o);
      expect(p.engine.launch).toBe('vllm-cpu');
      const ADDED = addedFor(p.topology.pp);
      for (const n of p.nodes) {
        const l = n.launchArgv;
        expect(l.slice(0, 3)).toEqual(['/tools/vllm-venv/bin/vllm', 'serve', '/tools/models/tiny-moe']);
        expect(l.slice(-ADDED.length)).toEqual(ADDED);
        const i = n.argv.indexOf('--gpu-memory-utilization');
        expect(i).toBeGreaterThan(0);
        const back = [...n.argv.slice(0, i), ...n.argv.slice(i + 2)];
        // undo the override: the rest is the planner's argv, token for token and in order
        expect(['vllm', 'serve', '/models/infersweep/tiny-moe', ...l.slice(3, -ADDED.length)]).toEqual(back);
      }
    }
  });

  it('the plan counts tokens with the generated model: model.tokenizer is its directory (aiperf loads it offline)', () => {
    for (const o of ORIENTATIONS) expect(plan(o).model.tokenizer).toBe('/tools/models/tiny-moe');
    // the config keeps its own id; a plan without the override keeps it too
    expect(config.model.tokenizer).toBe('infersweep/tiny-moe');
  });

  it('environment: one core per node, offline, no CUDA devices, the node address as VLLM_HOST_IP, loopback for gloo', () => {
    for (const o of ORIENTATIONS) {
      const p = plan(o);
      expect(p.nodes.map((n) => n.env.VLLM_CPU_OMP_THREADS_BIND)).toEqual(['0', '1']);
      for (const n of p.nodes) {
        expect(n.env).toMatchObject({
          HF_HUB_OFFLINE: '1',
          TRANSFORMERS_OFFLINE: '1',
          VLLM_NO_USAGE_STATS: '1',
          VLLM_HOST_IP: '{{NODE_ADDR}}',
          GLOO_SOCKET_IFNAME: 'lo',
        });
        expect(n.env.CUDA_VISIBLE_DEVICES).toBeUndefined();
      }
    }
  });

  it('plan lists every difference', () => {
    const d = plan('balanced').launchDifferences ?? [];
    expect(d).toEqual([
      'executable: vllm → /tools/vllm-venv/bin/vllm',
      'model path: /models/infersweep/tiny-moe → /tools/models/tiny-moe (config + tokenizer only)',
      'removed --gpu-memory-utilization 0.9 (not applicable on the CPU build)',
      'added --load-format dummy (random weights: numbers measure the orchestration, not a model)',
      'added --kv-cache-memory-bytes 268435456 (bounded KV cache instead of GPU memory utilisation)',
      "added --enforce-eager (no torch.compile: faster start; it cannot trace the plugin's MoE collectives)",
      'env VLLM_CPU_OMP_THREADS_BIND per node: node 0 → 0, node 1 → 1',
      'env added: HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1',
      'env removed: CUDA_VISIBLE_DEVICES (no GPUs); VLLM_HOST_IP stays the node address (rule 17)',
    ]);
  });

  it("the bash runner's shapes: PP across nodes, DP=2 internal LB with a headless rank, DP=2+EP, TP across nodes", () => {
    const lat = plan('latency');
    expect(lat.topology).toMatchObject({ tp: 1, pp: 2, dp: 1, nodes: 2, replica: 'spans-nodes' });
    expect(lat.nodes[1]!.deltaArgs).toEqual([
      '--nnodes',
      '2',
      '--node-rank',
      '1',
      '--master-addr',
      '{{HEAD_ADDR}}',
      '--master-port',
      '{{MASTER_PORT}}',
      '--headless',
    ]);
    const bal = plan('balanced');
    expect(bal.topology).toMatchObject({ dp: 2, dpLocal: 1, lbMode: 'internal', expertParallel: false });
    expect(bal.nodes[0]!.deltaArgs).toContain('--api-server-count');
    expect(bal.nodes[1]!.deltaArgs.slice(-3)).toEqual(['--headless', '--data-parallel-start-rank', '1']);
    expect(bal.engineIds).toEqual({ labelled: true, perMetricsEndpoint: [['0', '1']] });
    const thr = plan('throughput');
    expect(thr.topology).toMatchObject({ dp: 2, ep: 2, expertParallel: true });
    for (const n of thr.nodes) expect(n.launchArgv).toContain('--enable-expert-parallel');
    expect(thr.endpoints).toHaveLength(1);
    const tp = plan('tp');
    expect(tp.topology).toMatchObject({ tp: 2, nodes: 2, replica: 'spans-nodes' });
    expect(tp.warnings.some((w) => /TP crosses nodes/i.test(w))).toBe(true);
  });

  it('plans are schema-valid, round-trip and bind without placeholders left', () => {
    for (const o of ORIENTATIONS) {
      const p = plan(o);
      expect(sweepPlanSchema.parse(JSON.parse(JSON.stringify(p)))).toEqual(p);
      expect(planContentHash(p)).toBe(p.planHash);
      const b = bindPlan(p, {
        jobId: '1207',
        nodes: ['node1', 'node2'],
        headAddress: '127.0.0.1',
        nodeAddresses: ['127.0.0.1', '127.0.0.1'],
      });
      expect(JSON.stringify(b)).not.toMatch(/\{\{/);
      expect(b.nodes[0]!.launchArgv).toEqual(expect.arrayContaining(['--port', String(b.ports.port)]));
    }
  });

  it('spec-ngram: one node runs ngram speculative decoding (no draft model) greedily; the plan carries it, unwarned', () => {
    const p = plan('spec-ngram');
    expect(p.topology).toMatchObject({ tp: 1, pp: 1, dp: 1, nodes: 1 });
    expect(p.speculative).toEqual({
      method: 'ngram',
      numSpeculativeTokens: 3,
      config: { method: 'ngram', num_speculative_tokens: 3, prompt_lookup_max: 4, prompt_lookup_min: 2 },
    });
    // no recipe target (ngram has no synthetic acceptance): the point reports the length and warns about none
    expect(p.speculative?.expectedAcceptanceLength).toBeUndefined();
    const l = p.nodes[0]!.launchArgv;
    const at = (flag: string) => l[l.indexOf(flag) + 1];
    expect(JSON.parse(at('--speculative-config')!)).toEqual(p.speculative?.config);
    expect(at('--override-generation-config')).toBe('{"temperature":0}');
    expect(l.slice(-addedFor(1).length)).toEqual(addedFor(1));
    expect(p.nodes.map((n) => n.env.VLLM_CPU_OMP_THREADS_BIND)).toEqual(['0']);
    expect(sweepPlanSchema.parse(JSON.parse(JSON.stringify(p)))).toEqual(p);
    expect(planContentHash(p)).toBe(p.planHash);
  });

  it('a profile without a KV bound is refused, naming the field', () => {
    const bad = text.replace(/\n\s+kvCacheMemoryBytes: .*\n/, '\n');
    expect(bad).not.toBe(text);
    expect(() => load(bad)).toThrow(ConfigError);
    expect(() => load(bad)).toThrow(/kvCacheMemoryBytes/);
  });

  it("refuses the bash runner's hybrid shape behind one endpoint (the hybrid-LB test builds it by hand)", () => {
    const hybrid = text.replace(
      'topology: { tp: 1, dp: 2, ep: 2, nodes: 2 }',
      'topology: { tp: 1, dp: 2, ep: 2, nodes: 2, lbMode: hybrid, endpoints: single }',
    );
    expect(hybrid).not.toBe(text);
    expect(() => load(hybrid)).toThrow(/single endpoint leaves the other nodes' ranks idle/);
  });
});

describe('cpuLaunch / removeFlag', () => {
  const o: VllmCpuOverride = {
    kind: 'vllm-cpu',
    binary: '/v/vllm',
    modelPath: '/m',
    loadFormat: 'dummy',
    kvCacheMemoryBytes: 1024,
    ompThreadsBind: ['0-1', '2-3', '4'],
    compilationConfig: '{"mode":2}',
    dropArgs: ['--gpu-memory-utilization', '--disable-custom-all-reduce'],
    env: { HF_HUB_OFFLINE: '1' },
  };

  it('removes a flag with its value, in both spellings, and a switch alone', () => {
    const a = [
      'x',
      '--gpu-memory-utilization',
      '0.9',
      '--gpu-memory-utilization=0.8',
      '--disable-custom-all-reduce',
      '--max-num-seqs',
      '5',
      '--enforce-eager',
    ];
    expect(removeFlag(a, '--gpu-memory-utilization')).toEqual([
      ['--gpu-memory-utilization', '0.9'],
      ['--gpu-memory-utilization=0.8'],
    ]);
    expect(removeFlag(a, '--disable-custom-all-reduce')).toEqual([['--disable-custom-all-reduce']]);
    expect(removeFlag(a, '--enforce-eager')).toEqual([['--enforce-eager']]);
    expect(a).toEqual(['x', '--max-num-seqs', '5']);
  });

  it('replaces flags the override owns and cycles the thread binding over node ranks', () => {
    const argv = [
      'vllm',
      'serve',
      '/gpu/model',
      '--enforce-eager',
      '--kv-cache-memory-bytes',
      '9',
      '-tp',
      '1',
      '--disable-custom-all-reduce',
    ];
    const l = cpuLaunch({ rank: 4, argv, env: { CUDA_VISIBLE_DEVICES: '0', A: 'b' } }, o, 2);
    expect(l.launchArgv).toEqual([
      '/v/vllm',
      'serve',
      '/m',
      '-tp',
      '1',
      '--load-format',
      'dummy',
      '--kv-cache-memory-bytes',
      '1024',
      '--compilation-config',
      '{"mode":2}',
    ]);
    expect(l.env).toEqual({ A: 'b', HF_HUB_OFFLINE: '1', VLLM_CPU_OMP_THREADS_BIND: '2-3' });
    expect(argv[0]).toBe('vllm'); // the planner's argv is not mutated
    const d = cpuDifferences(
      o,
      ['vllm', 'serve', '/gpu/model', '--enforce-eager', '--disable-custom-all-reduce'],
      4,
      2,
    );
    expect(cpuLaunch({ rank: 0, argv, env: {} }, o, 1).launchArgv.slice(-1)).toEqual(['--enforce-eager']);
    expect(d).toContain('removed --enforce-eager (the vllm-cpu override sets it)');
    expect(d).toContain('removed --disable-custom-all-reduce (not applicable on the CPU build)');
    expect(d).toContain('env VLLM_CPU_OMP_THREADS_BIND per node: node 0 → 0-1, node 1 → 2-3, node 2 → 4, node 3 → 0-1');
  });
});
