import { describe, expect, it } from 'vitest';
import { bindPlan, planContentHash, planSweep, sweepPlanSchema } from '../src/index';
import { loadShipped, SHIPPED } from './helpers';

/** The three shipped orientations plan to rule 22's expected per-node deltas. */
const { config, source } = loadShipped();
const plan = (orientation: string, cluster = 'h200') => planSweep(config, { orientation, cluster, source });
const K3_COMMON = [
  '--trust-remote-code',
  '--load-format',
  'fastsafetensors',
  '--language-model-only',
  '-cc.pass_config.fuse_allreduce_rms=false',
  '--moe-backend',
  'marlin',
  '--disable-custom-all-reduce',
  '--no-enable-flashinfer-autotune',
  '--attention-backend',
  'FLASHMLA',
  '--enable-auto-tool-choice',
  '--tool-call-parser',
  'kimi_k3',
  '--reasoning-parser',
  'kimi_k3',
];
/** The bash runner's per-orientation engine values (gpu-memory-utilization, max-num-batched-tokens) and the derived --max-num-seqs. */
const SEED_ENGINE: Record<string, [string, string, string]> = {
  latency: ['0.95', '8', '4096'], // ⌈8 / DP 1⌉
  balanced: ['0.9', '16', '4096'], // ⌈32 / DP 2⌉
  throughput: ['0.85', '8', '1024'], // ⌈128 / DP 16⌉
};
const flag = (argv: readonly string[], f: string) => argv[argv.indexOf(f) + 1];
const H = '{{HEAD_ADDR}}';

describe(`${SHIPPED}: rule 22`, () => {
  it('latency: TP8/PP2 on 2 nodes, --nnodes form, no DP flags, no EP', () => {
    const p = plan('latency');
    expect(p.topology).toMatchObject({ tp: 8, pp: 2, dp: 1, ep: 1, nodes: 2, gpusPerNode: 8, replica: 'spans-nodes' });
    expect(p.nodes.map((n) => [...n.commonArgs.slice(0, 4), ...n.deltaArgs])).toEqual([
      [
        '-tp',
        '8',
        '-pp',
        '2',
        '--nnodes',
        '2',
        '--node-rank',
        '0',
        '--master-addr',
        H,
        '--master-port',
        '{{MASTER_PORT}}',
        '--port',
        '{{PORT}}',
      ],
      [
        '-tp',
        '8',
        '-pp',
        '2',
        '--nnodes',
        '2',
        '--node-rank',
        '1',
        '--master-addr',
        H,
        '--master-port',
        '{{MASTER_PORT}}',
        '--headless',
      ],
    ]);
    for (const n of p.nodes) {
      expect(n.argv.some((a) => a.startsWith('--data-parallel'))).toBe(false);
      expect(n.argv).not.toContain('--enable-expert-parallel');
      expect(n.env.VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS).toBe('1800');
    }
  });

  it('balanced: TP4/PP2/DP2/EP8 on 2 nodes, internal LB', () => {
    const p = plan('balanced');
    expect(p.topology).toMatchObject({ tp: 4, pp: 2, dp: 2, ep: 8, nodes: 2, dpLocal: 1, lbMode: 'internal' });
    const common = ['-tp', '4', '-pp', '2', '-dp', '2', '--enable-expert-parallel'];
    const dpFlags = [
      '--data-parallel-size-local',
      '1',
      '--data-parallel-address',
      H,
      '--data-parallel-rpc-port',
      '{{DP_RPC_PORT}}',
    ];
    expect(p.nodes[0]!.commonArgs.slice(0, 7)).toEqual(common);
    expect(p.nodes[0]!.deltaArgs).toEqual([...dpFlags, '--port', '{{PORT}}']);
    expect(p.nodes[1]!.deltaArgs).toEqual([...dpFlags, '--headless', '--data-parallel-start-rank', '1']);
    expect(p.engineIds).toEqual({ labelled: true, perMetricsEndpoint: [['0', '1']] });
  });

  it('throughput: TP1/PP2/DP16/EP16 on 4 nodes, internal LB, one endpoint, experimental on H200', () => {
    const p = plan('throughput');
    expect(p.topology).toMatchObject({ tp: 1, pp: 2, dp: 16, ep: 16, nodes: 4, dpLocal: 4 });
    expect(p.nodes.map((n) => n.deltaArgs.slice(-2))).toEqual([
      ['--port', '{{PORT}}'],
      ['--data-parallel-start-rank', '4'],
      ['--data-parallel-start-rank', '8'],
      ['--data-parallel-start-rank', '12'],
    ]);
    for (const n of p.nodes) {
      expect(n.argv).not.toContain('--data-parallel-hybrid-lb');
      expect(n.argv.includes('--headless')).toBe(n.rank > 0);
      expect(n.argv).toContain('--enable-expert-parallel');
    }
    expect(p.endpoints).toEqual(['http://{{HEAD_ADDR}}:{{PORT}}']);
    expect(p.clientMustBalance).toBe(false);
    expect(p.engineIds).toEqual({
      labelled: true,
      perMetricsEndpoint: [Array.from({ length: 16 }, (_, i) => String(i))],
    });
    expect(p.warnings.some((w) => w.startsWith('experimental on H200'))).toBe(true);
  });

  it("every node carries the K3 H200 recipe args identically, the bash runner's per-orientation engine values and the recipe env", () => {
    for (const o of ['latency', 'balanced', 'throughput']) {
      const p = plan(o);
      const [util, seqs, batched] = SEED_ENGINE[o]!;
      for (const n of p.nodes) {
        expect(n.commonArgs).toEqual(p.nodes[0]!.commonArgs);
        expect(n.commonArgs.slice(-K3_COMMON.length)).toEqual(K3_COMMON);
        expect([
          flag(n.argv, '--gpu-memory-utilization'),
          flag(n.argv, '--max-num-seqs'),
          flag(n.argv, '--max-num-batched-tokens'),
        ]).toEqual([util, seqs, batched]);
        expect(n.argv).toEqual(expect.arrayContaining(['--enable-prefix-caching', '--enable-prompt-tokens-details']));
        // PP 2 everywhere: the V1 runner, as the bash runner ran it
        expect(n.env).toMatchObject({
          PYTORCH_CUDA_ALLOC_CONF: 'expandable_segments:True',
          VLLM_USE_V2_MODEL_RUNNER: '0',
          VLLM_ENGINE_READY_TIMEOUT_S: '7200',
          VLLM_HOST_IP: '{{NODE_ADDR}}',
        });
        expect(n.env.VLLM_RPC_TIMEOUT).toBeUndefined();
        expect(n.env.NCCL_SOCKET_IFNAME).toBe(config.clusters.h200!.dataInterface);
      }
      expect(p.engine.settings).toMatchObject({
        gpuMemoryUtilization: Number(util),
        maxNumSeqs: Number(seqs),
        maxNumSeqsSource: 'derived',
        queuedPoints: [],
      });
      expect(p.readinessTimeoutSeconds).toBe(7200);
      expect(p.agentx.profileDurationSeconds).toBe(3600);
      // Model default context kept (no --max-model-len); the capacity check replaces the recipe's rule of thumb.
      expect(p.nodes[0]!.argv).not.toContain('--max-model-len');
      expect(p.capacity).toMatchObject({ checked: true, verdict: 'ok', servedContextTokens: 1048576 });
    }
  });

  it('InferenceX-validated orientations: 4 nodes, EP32, no PP (V2 runner), one point per allocation', () => {
    const lat = plan('ix-latency');
    expect(lat.topology).toMatchObject({ tp: 16, pp: 1, dp: 2, ep: 32, nodes: 4, replica: 'spans-nodes' });
    const bal = plan('ix-balanced');
    expect(bal.topology).toMatchObject({ tp: 8, pp: 1, dp: 4, ep: 32, nodes: 4, dpLocal: 1, lbMode: 'internal' });
    for (const p of [lat, bal]) {
      expect(p.deployment).toMatchObject({ policy: 'allocation-per-point', allocations: p.points.length });
      for (const n of p.nodes) expect(n.env.VLLM_USE_V2_MODEL_RUNNER).toBe('1');
      expect(p.notes.some((x) => x.includes('is validated on H200 by InferenceX'))).toBe(true);
      expect(p.warnings.some((x) => x.includes('not a validated kimi-k3 profile'))).toBe(false);
    }
    expect(flag(lat.nodes[0]!.argv, '--gpu-memory-utilization')).toBe('0.975');
    expect(lat.engine.settings.maxNumSeqs).toBe(5); // pinned by InferenceX's recipe (docs/inferencex.md)
    expect(bal.engine.settings.maxNumSeqs).toBe(8); // pinned by InferenceX's recipe
  });

  it('plans are schema-valid, JSON round-trip, and hashed stably', () => {
    for (const cluster of ['h200', 'local']) {
      for (const o of ['latency', 'balanced', 'throughput']) {
        const p = plan(o, cluster);
        const again = sweepPlanSchema.parse(JSON.parse(JSON.stringify(p)));
        expect(again).toEqual(p);
        expect(planContentHash(again)).toBe(p.planHash);
        expect(plan(o, cluster).planHash).toBe(p.planHash);
      }
    }
    expect(plan('latency').planHash).not.toBe(plan('balanced').planHash);
  });

  it('local profile: simulator on node 0, stand-ins elsewhere, same vLLM argv, short time limit', () => {
    for (const o of ['latency', 'balanced', 'throughput']) {
      const local = plan(o, 'local');
      const h200 = plan(o, 'h200');
      expect(local.nodes.map((n) => n.argv)).toEqual(h200.nodes.map((n) => n.argv));
      expect(local.engine.launch).toBe('simulator');
      const head = local.nodes[0]!.launchArgv;
      expect(head[0]).toBe('llm-d-inference-sim');
      expect(head).toEqual(expect.arrayContaining(['--force-dummy-tokenizer', '--mode', 'random']));
      expect(head[head.indexOf('--time-to-first-token') + 1]).toMatch(/^\d+ms$/);
      expect(Number(head[head.indexOf('--max-num-seqs') + 1])).toBe(
        local.engine.settings.maxNumSeqs * local.topology.dp,
      );
      for (const n of local.nodes.slice(1)) {
        expect(n.launchArgv.slice(0, 2)).toEqual(['bash', '-c']);
        expect(n.launchArgv[3]).toBe(String(n.rank));
        expect(n.launchArgv.slice(4)).toEqual(n.argv);
      }
      expect(local.engineIds.labelled).toBe(false);
      expect(local.slurm).toMatchObject({
        partition: 'local',
        gres: false,
        exclusive: false,
        containerRuntime: 'host',
      });
      expect(local.slurm.timeLimitMinutes).toBeLessThanOrEqual(30);
      expect(local.agentx.profileDurationSeconds).toBeLessThanOrEqual(10);
      expect(local.agentx.traces).toMatchObject({ kind: 'synthetic' });
      expect(local.login).toMatchObject({
        host: '127.0.0.1',
        port: 2222,
        user: 'root',
        keyPath: '/stack/ssh/client_ed25519',
        hostKey: '/stack/ssh/host_key.pub',
      });
      expect(local.sharedDir).toBe('/stack/shared');
    }
  });

  it('binds to an allocation: no placeholders left, distinct job-derived ports', () => {
    const p = plan('throughput', 'local');
    const b = bindPlan(p, {
      jobId: '4242',
      nodes: ['node1', 'node2', 'node3', 'node4'],
      headAddress: '127.0.0.1',
      nodeAddresses: ['127.0.0.1', '127.0.0.1', '127.0.0.1', '127.0.0.1'],
    });
    const text = JSON.stringify(b);
    expect(text).not.toMatch(/\{\{/);
    expect(new Set([b.ports.port, b.ports.dpRpcPort, b.ports.masterPort]).size).toBe(3);
    expect(b.endpoints).toEqual([`http://127.0.0.1:${b.ports.port}`]);
    expect(b.nodes[1]!.argv).toEqual(expect.arrayContaining(['--data-parallel-rpc-port', String(b.ports.dpRpcPort)]));
    expect(b.nodes[0]!.launchArgv).toEqual(expect.arrayContaining(['--port', String(b.ports.port)]));
  });

  // A change detector, not a proof: the plan's own output, written down so a review sees every
  // change to argv, env, settings or capacity. The tests above assert what is right.
  it('change detector: the five orientations as planned (h200 per-node argv and env, engine settings, capacity)', () => {
    const snap = Object.fromEntries(
      ['latency', 'balanced', 'throughput', 'ix-latency', 'ix-balanced'].map((o) => {
        const p = plan(o);
        const cap = p.capacity.checked ? { verdict: p.capacity.verdict, summary: p.capacity.summary } : p.capacity;
        return [
          o,
          {
            topology: p.topology,
            slurm: p.slurm,
            engine: p.engine.settings,
            capacity: cap,
            nodes: p.nodes.map((n) => ({ rank: n.rank, argv: n.argv, env: n.env })),
            endpoints: p.endpoints,
            points: p.points,
          },
        ];
      }),
    );
    expect(snap).toMatchSnapshot();
  });
});
