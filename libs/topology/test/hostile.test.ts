import { describe, expect, it } from 'vitest';
import { bindPlan, ConfigError, parseSweepConfig, planSweep, BindError } from '../src/index';
import { edit, loadShipped, SHIPPED, shippedText, stackEnv } from './helpers';

/** Each hostile config fails with its own specific message: file, YAML path, value, fix. */
function configError(
  text: string,
  plan?: { orientation: string; cluster: string; points?: number[] },
  env: Record<string, string> = stackEnv,
): ConfigError {
  try {
    const { config, source } = parseSweepConfig(text, { file: SHIPPED, env });
    if (plan) planSweep(config, { ...plan, source });
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    expect((e as ConfigError).kind).toBe('fatal');
    return e as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('hostile configs', () => {
  it('wrong EP names file, path, value and the derived size', () => {
    const e = configError(
      edit('{ tp: 1, pp: 2, dp: 16, ep: 16, nodes: 4 }', '{ tp: 1, pp: 2, dp: 16, ep: 8, nodes: 4 }'),
    );
    expect(e.message).toContain(
      `${SHIPPED}: orientations.throughput.topology.ep: 8 — vLLM's EP size is TP×DP per PP stage = 16`,
    );
    expect(e.issues[0]!.line).toBe(shippedText.split('\n').findIndex((l) => l.includes('tp: 1, pp: 2, dp: 16')) + 1);
  });

  it('GPUs that do not tile a node', () => {
    const e = configError(edit('{ tp: 4, pp: 2, dp: 2, ep: 8, nodes: 2 }', '{ tp: 3, pp: 1, dp: 2 }'), {
      orientation: 'balanced',
      cluster: 'h200',
    });
    expect(e.message).toContain('orientations.balanced.topology.dp: 2 — TP×PP×DP = 6 GPUs do not tile nodes of 8 GPUs');
  });

  it('a typed-in node count that disagrees with the derived one', () => {
    const e = configError(edit('{ tp: 8, pp: 2, nodes: 2 }', '{ tp: 8, pp: 2, nodes: 3 }'), {
      orientation: 'latency',
      cluster: 'h200',
    });
    expect(e.message).toContain(
      'orientations.latency.topology.nodes: 3 — TP×PP×DP = 16 GPUs on 8-GPU nodes (cluster h200) need 2 nodes',
    );
  });

  it('missing or empty required values are errors, never empty strings', () => {
    expect(configError(edit('servedName: moonshotai/Kimi-K3', 'servedName: ""')).message).toContain(
      'model.servedName: "" — must not be empty',
    );
    expect(configError(edit('  servedName: moonshotai/Kimi-K3\n', '')).message).toContain(
      'model.servedName: (missing) — required',
    );
    expect(configError(edit('VLLM_USE_V2_MODEL_RUNNER: "1"', 'VLLM_USE_V2_MODEL_RUNNER: ""')).message).toContain(
      'engine.env.VLLM_USE_V2_MODEL_RUNNER: "" — must not be empty',
    );
    expect(configError(edit('port: ${INFERSWEEP_SSH_PORT:-2222}', 'port: ""')).message).toMatch(
      /clusters\.local\.loginHost(\.port)?: .*—/,
    );
  });

  it('a missing port at bind time is an error (empty PORT never reaches vllm serve)', () => {
    const { config, source } = loadShipped();
    const p = planSweep(config, { orientation: 'balanced', cluster: 'h200', source });
    expect(() => bindPlan(p, { jobId: '', nodes: ['a', 'b'], headAddress: '10.0.0.1' })).toThrow(/jobId is empty/);
    expect(() => bindPlan(p, { jobId: '7', nodes: ['a', 'b'], headAddress: ' ' })).toThrow(BindError);
    expect(() => bindPlan(p, { jobId: '7', nodes: ['a'], headAddress: '10.0.0.1' })).toThrow(
      /needs 2 nodes, allocation has 1/,
    );
    expect(() =>
      bindPlan(p, { jobId: '7', nodes: ['a', 'b'], headAddress: '10.0.0.1', nodeAddresses: ['x', ''] }),
    ).toThrow(/address of node 1/);
    const tampered = { ...p, endpoints: ['http://{{HEAD_ADDR}}:{{API_PORT}}'] };
    expect(() => bindPlan(tampered, { jobId: '7', nodes: ['a', 'b'], headAddress: '10.0.0.1' })).toThrow(
      /placeholder \{\{API_PORT\}\} has no value/,
    );
  });

  it('hybrid LB behind one endpoint (the bash runner bug)', () => {
    const e = configError(
      edit(
        '{ tp: 1, pp: 2, dp: 16, ep: 16, nodes: 4 }',
        '{ tp: 1, pp: 2, dp: 16, ep: 16, nodes: 4, lbMode: hybrid, endpoints: single }',
      ),
    );
    expect(e.message).toContain(
      'orientations.throughput.topology.endpoints: "single" — hybrid LB serves each node\'s ranks from that node\'s own API server',
    );
  });

  it('hybrid LB with per-node endpoints plans one endpoint per node (real engine)', () => {
    const { config, source } = parseSweepConfig(
      edit('{ tp: 1, pp: 2, dp: 16, ep: 16, nodes: 4 }', '{ tp: 1, pp: 2, dp: 16, ep: 16, lbMode: hybrid }'),
      { file: SHIPPED, env: stackEnv },
    );
    const p = planSweep(config, { orientation: 'throughput', cluster: 'h200', source });
    expect(p.endpoints).toEqual([0, 1, 2, 3].map((k) => `http://{{NODE_ADDR_${k}}}:{{PORT}}`));
    expect(p.clientMustBalance).toBe(true);
    expect(p.engineIds).toEqual({
      labelled: true,
      perMetricsEndpoint: [0, 1, 2, 3].map((k) => [0, 1, 2, 3].map((i) => String(4 * k + i))),
    });
    // …but the simulator cannot stand in for per-node servers.
    expect(() => planSweep(config, { orientation: 'throughput', cluster: 'local', source })).toThrow(
      /simulator override runs one server on node 0 only/,
    );
  });

  it('unknown keys name the key and list what is allowed', () => {
    const e = configError(edit('  kind: vllm\n', '  kind: vllm\n  maxModelLength: 32768\n'));
    expect(e.message).toContain(
      'engine.maxModelLength: 32768 — unknown key "maxModelLength" (allowed here: kind, version, commonArgs, env, secretEnv, maxModelLen',
    );
    const top = configError(`${shippedText}\nextra: 1\n`);
    expect(top.message).toMatch(/extra: 1 — unknown key "extra" \(allowed here: name, model,.*\) \(line \d+\)/);
  });

  it('time limit above the partition maximum names both numbers and the fix', () => {
    const e = configError(edit('maxWallMinutes: 720', 'maxWallMinutes: 120'), {
      orientation: 'balanced',
      cluster: 'h200',
    });
    expect(e.message).toMatch(
      /clusters\.h200\.maxWallMinutes: 120 — orientation balanced needs a 667-minute allocation \(.*\) but partition h200 allows 120 minutes; fix: fewer points/,
    );
  });

  it('allocation-per-point makes the limit per point', () => {
    const { config, source } = parseSweepConfig(edit('policy: shared-server', 'policy: allocation-per-point'), {
      file: SHIPPED,
      env: stackEnv,
    });
    const p = planSweep(config, { orientation: 'balanced', cluster: 'h200', source });
    expect(p.deployment.allocations).toBe(4);
    expect(p.slurm.timeLimitMinutes).toBe(Math.ceil(((1800 + 7200 + 900 + 3600 + 1800 + 600) * 1.15) / 60));
  });

  it('an unset ${VAR} names the variable; other clusters are not expanded', () => {
    const e = configError(shippedText, undefined, {});
    expect(e.message).toContain(
      'clusters.local.loginHost.keyPath: "${INFERSWEEP_STACK}/ssh/client_ed25519" — environment variable INFERSWEEP_STACK is not set',
    );
    const { config } = parseSweepConfig(shippedText, { file: SHIPPED, env: {}, clusters: ['h200'] });
    expect(config.clusters.h200!.partition).toBe('h200');
  });

  it('a requested point not in the orientation names both', () => {
    const e = configError(shippedText, { orientation: 'balanced', cluster: 'h200', points: [8, 5] });
    expect(e.message).toContain(
      "orientations.balanced.concurrency: [4,8,16,32] — requested point 5 is not in orientation balanced's concurrency list [4, 8, 16, 32]",
    );
    const { config, source } = loadShipped();
    expect(planSweep(config, { orientation: 'balanced', cluster: 'h200', source, points: [32, 8] }).points).toEqual([
      8, 32,
    ]);
  });

  it('derived flags in commonArgs, removed env vars and all2all backends', () => {
    expect(
      configError(edit('    - --trust-remote-code\n', '    - --trust-remote-code\n    - --port=8000\n'), {
        orientation: 'latency',
        cluster: 'h200',
      }).message,
    ).toContain('engine.commonArgs[1]: "--port=8000" — --port is derived, not a common argument');
    expect(
      configError(
        edit('    - --trust-remote-code\n', '    - --trust-remote-code\n    - --max-model-len\n    - "32768"\n'),
        {
          orientation: 'latency',
          cluster: 'h200',
        },
      ).message,
    ).toContain('set engine.maxModelLen');
    expect(
      configError(edit('NCCL_CUMEM_ENABLE: "1"', 'NCCL_CUMEM_ENABLE: "1"\n    VLLM_RPC_TIMEOUT: "100"'), {
        orientation: 'latency',
        cluster: 'h200',
      }).message,
    ).toContain('engine.env.VLLM_RPC_TIMEOUT: "100" — removed from vLLM');
    expect(
      configError(edit('  allowUnvalidated: false\n', '  allowUnvalidated: false\n  all2allBackend: pplx\n'), {
        orientation: 'balanced',
        cluster: 'h200',
      }).message,
    ).toContain('engine.all2allBackend: "pplx" — removed from vLLM');
  });

  it('DP×EP for K3 on H200 needs allowUnvalidated (rule 18)', () => {
    const e = configError(edit(/\n    allowUnvalidated: true   # experimental on H200[^\n]*/, ''), {
      orientation: 'throughput',
      cluster: 'h200',
    });
    expect(e.message).toContain(
      'orientations.throughput.topology.ep: 16 — DP16×EP16 is not a validated kimi-k3 profile on H200',
    );
  });

  it('EP on a dense model, EPLB without EP, traces longer than the context', () => {
    expect(configError(edit('moe: true', 'moe: false')).message).toContain(
      'orientations.balanced.topology.ep: 8 — expert parallelism needs an MoE model',
    );
    expect(
      configError(
        edit('  allowUnvalidated: false\n', '  allowUnvalidated: false\n  eplb: { numRedundantExperts: 2 }\n'),
        {
          orientation: 'latency',
          cluster: 'h200',
        },
      ).message,
    ).toContain('engine.eplb');
    expect(
      configError(edit('maxContextTokens: 4096', 'maxContextTokens: 16384'), {
        orientation: 'latency',
        cluster: 'local',
      }).message,
    ).toContain('agentx.traces.maxContextTokens: 16384 — exceeds the served context window 8192 tokens');
  });

  const lineOf = (text: string, needle: string): number => text.split('\n').findIndex((l) => l.includes(needle)) + 1;

  it('a duplicate key is reported on the line of the second occurrence', () => {
    const text = edit('image: vllm/vllm-openai:kimi-k3\n', 'image: vllm/vllm-openai:kimi-k3\nimage: other\n');
    const e = configError(text);
    expect(e.issues).toHaveLength(1);
    expect(e.issues[0]!.line).toBe(lineOf(text, 'image: other'));
    expect(e.message).toBe(
      `${SHIPPED}: (top level): (YAML) — Map keys must be unique: this key already appears earlier in the same mapping (line ${lineOf(text, 'image: other')})`,
    );
  });

  it('an unclosed flow mapping or sequence is reported on the line where it opens, not where the parser gave up', () => {
    const text = edit('{ tp: 1, pp: 2, dp: 16, ep: 16, nodes: 4 }', '{ tp: 1, pp: 2, dp: 16, ep: 16, nodes: 4');
    const e = configError(text);
    expect(e.issues.map((i) => i.line)).toEqual([lineOf(text, '{ tp: 1, pp: 2, dp: 16, ep: 16, nodes: 4')]);
    expect(e.issues[0]!.message).toMatch(/the \{ opened on this line is not closed$/);
    const seq = configError('name: x\nmodel: [unclosed\nimage: y\n');
    expect(seq.issues.map((i) => [i.line, i.message])).toEqual([
      [
        2,
        'Flow sequence in block collection must be sufficiently indented and end with a ]: the [ opened on this line is not closed',
      ],
    ]);
    const quote = configError('name: x\nimage: "vllm\n\nmodel: y\n');
    expect(quote.issues.map((i) => i.line)).toEqual([2]);
  });

  it('nine levels of nested aliases (billion laughs) are refused at the alias that passes the limit, before expansion', () => {
    const lol = Array.from({ length: 9 }, () => '"lol"').join(', ');
    const levels = 'abcdefghi'.split('');
    const text = levels
      .map((l, i) =>
        i === 0
          ? `${l}: &${l} [${lol}]`
          : `${l}: &${l} [${Array.from({ length: 9 }, () => `*${levels[i - 1]}`).join(', ')}]`,
      )
      .join('\n');
    const t0 = performance.now();
    const e = configError(text);
    expect(performance.now() - t0).toBeLessThan(1_000);
    // expansion in document order: a = 10 values; b's aliases add 9×10; c's 9×91; d's 9×820 (8289 in all);
    // the first alias of e adds 7381 and passes 10000: line 5
    expect(e.issues.map((i) => i.line)).toEqual([5]);
    expect(e.message).toBe(
      `${SHIPPED}: (top level): (YAML) — aliases expand this config to more than 10000 values (nested aliases multiply): write the values out instead of aliasing aliases (line 5)`,
    );
  });

  it('an alias to no anchor, or inside its own anchor, is a config error on its line', () => {
    expect(configError('name: x\nmodel: *nope\n').issues.map((i) => [i.line, i.message])).toEqual([
      [2, 'the alias *nope names no anchor &nope defined before it'],
    ]);
    expect(configError('name: x\nmodel: &m\n  - a\n  - *m\n').issues.map((i) => i.line)).toEqual([4]);
  });

  it('aliases below the limit still parse: a hundred aliases of one small anchor', () => {
    const many = `x-shared: &s { a: 1 }\nx-copies: [${Array.from({ length: 120 }, () => '*s').join(', ')}]\n`;
    const e = configError(many);
    // the aliases are expanded (the library's own limit is 100 aliases); what remains is the schema's complaint
    expect(e.issues.filter((i) => i.value === '(YAML)')).toEqual([]);
    expect(e.issues.find((i) => i.path === 'x-copies')?.value).toBe(
      `[${Array.from({ length: 120 }, () => '{"a":1}').join(',')}]`.slice(0, 77) + '...',
    );
  });
});
