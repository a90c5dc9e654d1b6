import { describe, expect, it } from 'vitest';
import {
  bindPlan,
  checkLaunchInvariants,
  derivePorts,
  WORKER_PORT_STRIDE,
  ConfigError,
  parseSweepConfig,
  planSweep,
  routerArgv,
  sweepPlanSchema,
  routerSchema,
  type SweepConfig,
} from '../../src/index';
import { planContentHash } from '../../src/plan/assemble-plan';
import { loadShipped, SHIPPED, shippedText, stackEnv } from '../helpers';

/** Rules 23–28 (docs/topology-rules.md): disaggregated prefill/decode orientations. */
const { config, source } = loadShipped();
const plan = (orientation = 'pd-1p1d', cluster = 'h200', c: SweepConfig = config) =>
  planSweep(c, { orientation, cluster, source });
const kvOf = (argv: readonly string[]) =>
  JSON.parse(argv[argv.indexOf('--kv-transfer-config') + 1] ?? 'null') as Record<string, unknown>;
const flag = (argv: readonly string[], f: string) => argv[argv.indexOf(f) + 1];

/** The shipped config with the pd-1p1d block replaced by `block` (YAML under `disaggregated:`, 6-space indent). */
function withPd(block: string, extra = ''): SweepConfig {
  const start = shippedText.indexOf('  pd-1p1d:');
  const text = `${shippedText.slice(0, start)}  pd-x:\n    disaggregated:\n${block}    concurrency: [1, 2, 4, 8]\n${extra}`;
  return parseSweepConfig(text, { file: SHIPPED, env: stackEnv }).config;
}
const roles = (p: string, d: string, connector = '{ kind: NixlConnector }', router = '') =>
  `      prefill: ${p}\n      decode: ${d}\n      connector: ${connector}\n${router ? `      router: ${router}\n` : ''}`;
const planX = (c: SweepConfig) => planSweep(c, { orientation: 'pd-x', cluster: 'h200', source });
function issuesOf(f: () => unknown): { path: string; message: string }[] {
  try {
    f();
  } catch (e) {
    if (e instanceof ConfigError) return e.issues;
    throw e;
  }
  throw new Error('expected a ConfigError');
}

describe('the shipped pd-1p1d orientation on h200 (rules 23–28)', () => {
  const p = plan();

  it('lays one TP8×PP2 prefill worker on nodes 0–1 and one decode worker on nodes 2–3 of a 4-node allocation', () => {
    expect(sweepPlanSchema.parse(p)).toEqual(p);
    expect(p.slurm.nodes).toBe(4);
    expect(p.topology).toMatchObject({ nodes: 4, gpus: 32, gpusPerNode: 8 });
    expect(p.nodes.map((n) => [n.rank, n.role, n.worker, n.serves])).toEqual([
      [0, 'prefill', 0, true],
      [1, 'prefill', 0, false],
      [2, 'decode', 0, true],
      [3, 'decode', 0, false],
    ]);
    const [pf, dc] = p.disaggregation!.roles;
    expect([pf!.role, pf!.workerNodes, pf!.gpus, dc!.role, dc!.workerNodes, dc!.gpus]).toEqual([
      'prefill',
      [[0, 1]],
      16,
      'decode',
      [[2, 3]],
      16,
    ]);
  });

  it("every node carries its role's --kv-transfer-config in its common args and the NIXL side channel in its env", () => {
    for (const n of p.nodes) {
      expect(kvOf(n.argv)).toEqual({
        kv_connector: 'NixlConnector',
        kv_role: n.role === 'prefill' ? 'kv_producer' : 'kv_consumer',
        kv_load_failure_policy: 'fail',
      });
      expect(n.commonArgs).toContain('--kv-transfer-config');
      expect(n.argv).toEqual(['vllm', 'serve', config.model.path, ...n.commonArgs, ...n.deltaArgs]);
      expect(n.launchArgv).toEqual(n.argv);
      expect(n.env).toMatchObject({
        VLLM_NIXL_SIDE_CHANNEL_HOST: '{{NODE_ADDR}}',
        VLLM_NIXL_SIDE_CHANNEL_PORT: '5600',
        VLLM_HOST_IP: '{{NODE_ADDR}}',
      });
    }
  });

  it("each worker's nodes share one common argument list (rule 9) and point at the worker's own head", () => {
    const byWorker = [p.nodes.slice(0, 2), p.nodes.slice(2, 4)];
    for (const [w, nodes] of byWorker.entries()) {
      expect(nodes[1]!.commonArgs).toEqual(nodes[0]!.commonArgs);
      for (const n of nodes) expect(flag(n.argv, '--master-addr')).toBe(`{{NODE_ADDR_${w * 2}}}`);
      // a worker's commands keep rules 6–15 with their worker-local ranks
      const local = nodes.map((n, k) => ({ ...n, rank: k }));
      expect(checkLaunchInvariants(p.disaggregation!.roles[w]!.topology, local, config.model.path)).toEqual([]);
    }
    expect(flag(p.nodes[2]!.argv, '--node-rank')).toBe('0');
    // the roles' own engine settings: prefill takes whole prompts per step
    expect(flag(p.nodes[0]!.argv, '--max-num-batched-tokens')).toBe('16384');
    expect(flag(p.nodes[2]!.argv, '--max-num-batched-tokens')).toBe('4096');
  });

  it("the client talks to the router on node 0 only; the router lists each role's worker heads; metrics come from the workers", () => {
    const r = p.disaggregation!.router;
    expect(p.endpoints).toEqual(['http://{{HEAD_ADDR}}:{{ROUTER_PORT}}']);
    expect(p.clientMustBalance).toBe(false);
    expect(r.argv).toEqual([
      'vllm-router',
      '--vllm-pd-disaggregation',
      '--prefill',
      'http://{{NODE_ADDR_0}}:{{PORT}}',
      '--decode',
      'http://{{NODE_ADDR_2}}:{{PORT_1}}',
      '--prefill-policy',
      'consistent_hash',
      '--decode-policy',
      'power_of_two',
      '--host',
      '0.0.0.0',
      '--port',
      '{{ROUTER_PORT}}',
    ]);
    expect(p.metricsEndpoints).toEqual([
      'http://{{NODE_ADDR_0}}:{{PORT}}/metrics',
      'http://{{NODE_ADDR_2}}:{{PORT_1}}/metrics',
    ]);
    expect(p.healthEndpoints[0]).toBe('http://{{HEAD_ADDR}}:{{ROUTER_PORT}}/health');
    expect(p.engineIds).toEqual({ labelled: true, perMetricsEndpoint: [['0'], ['0']] });
  });

  it('checks capacity per role (rule 28) and not for the allocation as one deployment', () => {
    expect(p.capacity).toEqual({ checked: false, reason: expect.stringContaining('per role') });
    for (const r of p.disaggregation!.roles) expect(r.capacity).toMatchObject({ checked: true, verdict: 'ok' });
  });

  it('binds to a 4-node allocation with nothing left over, the router port from its own range', () => {
    const nodes = ['n1', 'n2', 'n3', 'n4'];
    const b = bindPlan(p, { jobId: '4242', nodes, headAddress: 'n1' });
    expect(b.ports.routerPort).toBe(16000 + (4242 % 4000));
    expect(b.endpoints).toEqual(['http://n1:16242']);
    expect(b.nodes[2]!.argv).toContain('n3');
    expect(flag(b.nodes[3]!.argv, '--master-addr')).toBe('n3');
    expect(b.nodes[3]!.env.VLLM_NIXL_SIDE_CHANNEL_HOST).toBe('n4');
    expect(JSON.stringify(b)).not.toMatch(/\{\{/);
    // an aggregated plan binds without a router port (bound deployments of old histories have none)
    expect(bindPlan(plan('latency'), { jobId: '4242', nodes: ['a', 'b'], headAddress: 'a' }).ports.routerPort).toBe(
      undefined,
    );
  });

  it('is deterministic and its hash covers the roles', () => {
    expect(plan()).toEqual(p);
    expect(planContentHash(p)).toBe(p.planHash);
    const other = withPd(roles('{ topology: { tp: 8, pp: 2 } }', '{ topology: { tp: 8, pp: 2 } }'));
    expect(planX(other).planHash).not.toBe(p.planHash);
  });
});

describe('xPyD layouts', () => {
  it('2P1D: three workers on consecutive node pairs, the router lists both prefill heads', () => {
    const p = planX(withPd(roles('{ workers: 2, topology: { tp: 8, pp: 2 } }', '{ topology: { tp: 8, pp: 2 } }')));
    expect(p.slurm.nodes).toBe(6);
    expect(p.topology.gpus).toBe(48);
    expect(p.disaggregation!.roles.map((r) => r.workerNodes)).toEqual([
      [
        [0, 1],
        [2, 3],
      ],
      [[4, 5]],
    ]);
    expect(p.nodes.map((n) => `${n.role}${n.worker}`)).toEqual([
      'prefill0',
      'prefill0',
      'prefill1',
      'prefill1',
      'decode0',
      'decode0',
    ]);
    expect(p.nodes.map((n) => flag(n.argv, '--master-addr'))).toEqual(
      [0, 0, 2, 2, 4, 4].map((k) => `{{NODE_ADDR_${k}}}`),
    );
    const argv = p.disaggregation!.router.argv;
    expect(argv.filter((_, i) => argv[i - 1] === '--prefill')).toEqual([
      'http://{{NODE_ADDR_0}}:{{PORT}}',
      'http://{{NODE_ADDR_2}}:{{PORT_1}}',
    ]);
    const b = bindPlan(p, { jobId: '7', nodes: ['a', 'b', 'c', 'd', 'e', 'f'], headAddress: 'a' });
    expect(b.nodes.map((n) => flag(n.argv, '--master-addr'))).toEqual(['a', 'a', 'c', 'c', 'e', 'e']);
    // every worker on its own port (nodes sharing an address never clash): PORT + 64 × worker
    const port = derivePorts('7').port;
    expect(b.nodes.filter((n) => n.serves).map((n) => flag(n.argv, '--port'))).toEqual(
      [0, 1, 2].map((g) => String(port + g * WORKER_PORT_STRIDE)),
    );
  });

  it('a DP decode role under internal LB: the router reaches only its head (vLLM: "only the head instances")', () => {
    const c = withPd(
      roles('{ topology: { tp: 8, pp: 2 } }', '{ topology: { tp: 8, pp: 2, dp: 2 } }'),
      '    allowUnvalidated: true\n',
    );
    const p = planX(c);
    expect(p.slurm.nodes).toBe(6);
    const argv = p.disaggregation!.router.argv;
    expect(argv.filter((_, i) => argv[i - 1] === '--decode')).toEqual(['http://{{NODE_ADDR_2}}:{{PORT_1}}']);
    expect(p.engineIds).toEqual({ labelled: true, perMetricsEndpoint: [['0'], ['0', '1']] });
  });
});

describe('P/D rules refuse what vLLM refuses (rules 24–26)', () => {
  it('NixlConnector on a hybrid (linear-attention) model: prefill and decode TP must be equal', () => {
    const c = withPd(roles('{ topology: { tp: 8, pp: 2 } }', '{ topology: { tp: 16 } }'));
    expect(issuesOf(() => planX(c))).toEqual([
      {
        path: 'orientations.pd-x.disaggregated.decode.topology.tp',
        value: '16',
        message: expect.stringMatching(/linear-attention .*same TP .*rule 24/),
        line: expect.any(Number),
      },
    ]);
    // without linear-attention layers heterogeneous TP is allowed (MLA: vLLM's compatibility matrix)
    const dense = structuredClone(c);
    delete dense.model.architecture!.linearAttention;
    expect(planX(dense).disaggregation!.roles.map((r) => r.topology.tp)).toEqual([8, 16]);
  });

  it('P2pNcclConnector: symmetric TP, no PP, and vllm-router for its discovery', () => {
    const bad = withPd(
      roles(
        '{ topology: { tp: 8, pp: 2 } }',
        '{ topology: { tp: 16 } }',
        '{ kind: P2pNcclConnector }',
        '{ kind: toy-proxy }',
      ),
    );
    expect(issuesOf(() => planX(bad)).map((i) => i.path.replace('orientations.pd-x.disaggregated.', ''))).toEqual([
      'decode.topology.tp',
      'prefill.topology.pp',
      'router.kind',
    ]);
  });

  it('P2pNcclConnector: http_port is the worker port, proxy_ip the router node, the router listens for discovery', () => {
    const c = withPd(
      roles(
        '{ topology: { tp: 16 } }',
        '{ topology: { tp: 16 } }',
        '{ kind: P2pNcclConnector, kvPort: 21001, discoveryPort: 30001 }',
      ),
    );
    const p = planX(c);
    expect(kvOf(p.nodes[0]!.argv)).toEqual({
      kv_connector: 'P2pNcclConnector',
      kv_role: 'kv_producer',
      kv_buffer_size: '10',
      kv_port: '21001',
      kv_connector_extra_config: {
        proxy_ip: '{{HEAD_ADDR}}',
        proxy_port: '30001',
        http_port: '{{PORT}}',
        send_type: 'PUT_ASYNC',
      },
    });
    expect(kvOf(p.nodes[2]!.argv)).toMatchObject({ kv_role: 'kv_consumer', kv_buffer_size: '8000000000' });
    expect(p.disaggregation!.router.argv.slice(0, 4)).toEqual([
      'vllm-router',
      '--vllm-pd-disaggregation',
      '--vllm-discovery-address',
      '0.0.0.0:30001',
    ]);
    expect(p.nodes[0]!.env.VLLM_NIXL_SIDE_CHANNEL_PORT).toBeUndefined();
  });

  it('the handshake compares KV dtype, attention backend and the speculative method/draft: they must match', () => {
    const spec = (n: number, method = 'eagle') =>
      `'{"method":"${method}","model":"d/raft","num_speculative_tokens":${n}}'`;
    const e = (args: string) => `{ topology: { tp: 8, pp: 2 }, engine: { extraArgs: [${args}] } }`;
    const cases: [string, string, RegExp][] = [
      [e('--kv-cache-dtype, fp8'), e('--kv-cache-dtype, bf16'), /--kv-cache-dtype must be equal/],
      [
        e(`--speculative-config, ${spec(2)}`),
        '{ topology: { tp: 8, pp: 2 } }',
        /speculative decoding on one role only/,
      ],
      [
        e(`--speculative-config, ${spec(2)}`),
        e(`--speculative-config, ${spec(2, 'mtp')}`),
        /speculative method differs/,
      ],
      [e('--speculative-config, "{not json"'), e(`--speculative-config, ${spec(2)}`), /must be a JSON object/],
    ];
    for (const [p, d, want] of cases)
      expect(issuesOf(() => planX(withPd(roles(p, d)))).map((i) => i.message)).toEqual([expect.stringMatching(want)]);
    // the number of speculative tokens may differ between P and D
    const ok = planX(withPd(roles(e(`--speculative-config, ${spec(1)}`), e(`--speculative-config, ${spec(3)}`))));
    expect(ok.nodes.map((n) => JSON.parse(flag(n.argv, '--speculative-config')!).num_speculative_tokens)).toEqual([
      1, 1, 3, 3,
    ]);
  });

  it("a role's own problem is reported at the role's path", () => {
    const c = withPd(roles('{ topology: { tp: 8, pp: 2 } }', '{ topology: { tp: 8, pp: 2, nodes: 3 } }'));
    expect(issuesOf(() => planX(c))).toEqual([
      {
        path: 'orientations.pd-x.disaggregated.decode.topology.nodes',
        value: '3',
        message: expect.stringMatching(/^decode role: TP×PP×DP = 16 GPUs .* need 2 nodes/),
        line: expect.any(Number),
      },
    ]);
  });

  it('the connector flag is derived: --kv-transfer-config in extraArgs is refused', () => {
    const c = withPd(
      roles(
        "{ topology: { tp: 8, pp: 2 }, engine: { extraArgs: ['--kv-transfer-config', '{}'] } }",
        '{ topology: { tp: 8, pp: 2 } }',
      ),
    );
    expect(issuesOf(() => planX(c)).map((i) => i.message)).toEqual([
      expect.stringMatching(/^prefill role: --kv-transfer-config is derived.*disaggregated\.connector/),
    ]);
  });

  it('an orientation is either aggregated or disaggregated', () => {
    const both = shippedText.replace('  pd-1p1d:\n', '  pd-1p1d:\n    topology: { tp: 8, pp: 2 }\n');
    const neither = shippedText.replace(/ {4}disaggregated:\n(?: {6}.*\n)+/, '');
    expect(() => parseSweepConfig(both, { file: SHIPPED, env: stackEnv })).toThrow(/not both/);
    expect(() => parseSweepConfig(neither, { file: SHIPPED, env: stackEnv })).toThrow(
      /set topology .* or disaggregated/,
    );
  });

  it('a role topology that breaks a cluster-independent rule fails at parse time at its path', () => {
    const text = shippedText.replace(
      '        topology: { tp: 8, pp: 2 }\n      connector',
      '        topology: { tp: 8, pp: 2, ep: 4 }\n      connector',
    );
    expect(() => parseSweepConfig(text, { file: SHIPPED, env: stackEnv })).toThrow(
      /orientations\.pd-1p1d\.disaggregated\.decode\.topology\.ep/,
    );
  });
});

describe('the router argv (rule 26)', () => {
  it("toy-proxy: vLLM's proxy with host and port lists per role", () => {
    const r = routerSchema.parse({ kind: 'toy-proxy', binary: '/opt/toy_proxy_server.py' });
    expect(
      routerArgv(
        r,
        { kind: 'NixlConnector', sideChannelPort: 5600, loadFailurePolicy: 'fail' },
        {
          prefill: ['http://{{NODE_ADDR_0}}:{{PORT}}', 'http://{{NODE_ADDR_2}}:{{PORT}}'],
          decode: ['http://{{NODE_ADDR_4}}:{{PORT}}'],
        },
      ),
    ).toEqual([
      'python3',
      '/opt/toy_proxy_server.py',
      '--host',
      '0.0.0.0',
      '--port',
      '{{ROUTER_PORT}}',
      '--prefiller-hosts',
      '{{NODE_ADDR_0}}',
      '{{NODE_ADDR_2}}',
      '--prefiller-ports',
      '{{PORT}}',
      '{{PORT}}',
      '--decoder-hosts',
      '{{NODE_ADDR_4}}',
      '--decoder-ports',
      '{{PORT}}',
    ]);
  });

  it("llm-d-pd-sidecar: on the decode worker's head in front of it, the prefillers in the header the client sends", () => {
    const p = planX(
      withPd(
        roles(
          '{ workers: 2, topology: { tp: 8, pp: 2 } }',
          '{ topology: { tp: 8, pp: 2 } }',
          undefined,
          '{ kind: llm-d-pd-sidecar, extraArgs: [--zap-log-level=info] }',
        ),
      ),
    );
    const r = p.disaggregation!.router;
    expect(r.node).toBe(4);
    expect(r.argv).toEqual([
      'pd-sidecar',
      '--port',
      '{{ROUTER_PORT}}',
      '--vllm-port',
      '{{PORT_2}}',
      '--kv-connector',
      'nixlv2',
      '--secure-proxy=false',
      '--enable-prefiller-sampling',
      '--zap-log-level=info',
    ]);
    expect(r.requestHeaders).toEqual({
      'x-prefiller-host-port': '{{NODE_ADDR_0}}:{{PORT}},{{NODE_ADDR_2}}:{{PORT_1}}',
    });
    expect(p.endpoints).toEqual(['http://{{NODE_ADDR_4}}:{{ROUTER_PORT}}']);
    expect(p.nodes[4]!.launchArgv).toEqual(expect.arrayContaining(['--port', '{{PORT_2}}']));
    const b = bindPlan(p, {
      jobId: '100',
      nodes: ['a', 'b', 'c', 'd', 'e', 'f'],
      headAddress: '10.0.0.1',
      nodeAddresses: ['a', 'b', 'c', 'd', 'e', 'f'].map((_, i) => `10.0.0.${i + 1}`),
    });
    const port = derivePorts('100');
    expect(b.router).toEqual({
      rank: 4,
      node: 'e',
      argv: [
        'pd-sidecar',
        '--port',
        String(port.routerPort),
        '--vllm-port',
        String(port.port + 2 * WORKER_PORT_STRIDE),
        '--kv-connector',
        'nixlv2',
        '--secure-proxy=false',
        '--enable-prefiller-sampling',
        '--zap-log-level=info',
      ],
      env: { OTEL_TRACES_SAMPLER_ARG: '0' },
      endpoint: `http://10.0.0.5:${port.routerPort}`,
    });
    expect(b.requestHeaders).toEqual({
      'x-prefiller-host-port': `10.0.0.1:${port.port},10.0.0.3:${port.port + WORKER_PORT_STRIDE}`,
    });
    expect(b.endpoints).toEqual([`http://10.0.0.5:${port.routerPort}`]);
  });

  it('llm-d-pd-sidecar fronts one decode worker over NixlConnector: other shapes are refused at their paths', () => {
    const issues = issuesOf(() =>
      planX(
        withPd(
          roles(
            '{ topology: { tp: 8 } }',
            '{ workers: 2, topology: { tp: 8 } }',
            '{ kind: P2pNcclConnector }',
            '{ kind: llm-d-pd-sidecar }',
          ),
        ),
      ),
    );
    expect(issues.map((i) => i.path)).toEqual(
      expect.arrayContaining([
        'orientations.pd-x.disaggregated.connector.kind',
        'orientations.pd-x.disaggregated.decode.workers',
      ]),
    );
    expect(issues.map((i) => i.message).join('\n')).toMatch(/fronts one decode worker/);
  });

  it('llm-d-pd-sidecar with the aiperf client plans: the prefiller header is for aiperf to send (rule 27 gates both roles)', () => {
    const sidecar = (client: 'aiperf' | 'infersweep') => {
      const c = withPd(
        roles(
          '{ topology: { tp: 8, pp: 2 } }',
          '{ topology: { tp: 8, pp: 2 } }',
          undefined,
          '{ kind: llm-d-pd-sidecar }',
        ),
      );
      c.agentx = { ...c.agentx, client };
      return planX(c);
    };
    const withAiperf = sidecar('aiperf');
    expect(withAiperf.agentx.client).toBe('aiperf');
    // the same router and prefiller header as under infersweep's client: aiperf sends it with --header
    expect(withAiperf.disaggregation!.router).toEqual(sidecar('infersweep').disaggregation!.router);
    expect(withAiperf.disaggregation!.router.requestHeaders).toEqual({
      'x-prefiller-host-port': '{{NODE_ADDR_0}}:{{PORT}}',
    });
    // every worker's metrics endpoint, prefill first: the role gate reads each role's own counters
    expect(withAiperf.metricsEndpoints).toHaveLength(2);
  });

  it('a toy-proxy plan says it is a test proxy', () => {
    const p = planX(
      withPd(
        roles('{ topology: { tp: 8, pp: 2 } }', '{ topology: { tp: 8, pp: 2 } }', undefined, '{ kind: toy-proxy }'),
      ),
    );
    expect(p.warnings).toEqual(expect.arrayContaining([expect.stringMatching(/toy-proxy is vLLM's test proxy/)]));
  });
});

describe('speculative decoding in the plan (plan/speculative.ts)', () => {
  it("the ix-* arms run InferenceX's DSpark recipe: method, draft, tokens and its synthetic acceptance length", () => {
    expect(plan('ix-latency').speculative).toEqual({
      method: 'dspark',
      model: 'Inferact/Kimi-K3-DSpark',
      numSpeculativeTokens: 2,
      expectedAcceptanceLength: 2.51,
      config: {
        method: 'dspark',
        model: 'Inferact/Kimi-K3-DSpark',
        num_speculative_tokens: 2,
        draft_sample_method: 'probabilistic',
        rejection_sample_method: 'synthetic',
        synthetic_acceptance_length: 2.51,
      },
    });
    expect(plan('latency').speculative).toBeUndefined();
  });

  it("ngram has no draft model and no expected length; a P/D plan carries the roles' common method", () => {
    const ngram = `'{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4}'`;
    const e = `{ topology: { tp: 8, pp: 2 }, engine: { extraArgs: [--speculative-config, ${ngram}] } }`;
    expect(planX(withPd(roles(e, e))).speculative).toEqual({
      method: 'ngram',
      numSpeculativeTokens: 3,
      config: { method: 'ngram', num_speculative_tokens: 3, prompt_lookup_max: 4 },
    });
  });
});
