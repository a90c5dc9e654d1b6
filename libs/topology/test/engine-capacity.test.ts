import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  estimateCapacity,
  gpuMemoryBytes,
  judgeCapacity,
  kvBytesPerTokenPerLayer,
  modelArchitectureSchema,
  parseSweepConfig,
  planSweep,
  resolveEngineSettings,
  type CapacityInput,
} from '../src/index';
import { edit, loadShipped, SHIPPED, stackEnv } from './helpers';

const flag = (argv: readonly string[], f: string) => (argv.includes(f) ? argv[argv.indexOf(f) + 1] : undefined);
const planText = (text: string, orientation: string, extra: { force?: boolean; points?: number[] } = {}) => {
  const { config, source } = parseSweepConfig(text, { file: SHIPPED, env: stackEnv });
  return planSweep(config, { orientation, cluster: 'h200', source, ...extra });
};
const planError = (text: string, orientation: string): ConfigError => {
  try {
    planText(text, orientation);
  } catch (e) {
    if (e instanceof ConfigError) return e;
    throw e;
  }
  throw new Error('expected a ConfigError');
};

const ENGINE = { gpuMemoryUtilization: 0.9, prefixCaching: true, promptTokensDetails: true, env: { A: '1' } } as const;

describe('engine settings (plan/engine.ts)', () => {
  it('--max-num-seqs is ⌈max concurrency / DP⌉ per DP rank when not pinned', () => {
    const cases: [number[], number, number][] = [
      [[1, 2, 4, 8], 1, 8],
      [[4, 8, 16, 32], 2, 16],
      [[16, 32, 64, 128], 16, 8],
      [[10], 3, 4],
      [[1], 16, 1],
      [[12, 1], 2, 6],
    ];
    for (const [points, dp, want] of cases) {
      const r = resolveEngineSettings({ orientation: 'o', engine: ENGINE, dp, pp: 1, points });
      expect(r.settings.maxNumSeqs, `${points} / DP ${dp}`).toBe(want);
      expect(r.settings.maxNumSeqsSource).toBe('derived');
      expect(r.settings.maxNumSeqsDerivation).toBe(`⌈${Math.max(...points)} / DP ${dp}⌉ = ${want}`);
      expect(r.settings.queued).toEqual([]);
      expect(r.warnings).toEqual([]);
    }
  });

  it('a pinned value that is too small names every point that will queue (the seed bug: 5 per rank against c=8, 32, 128)', () => {
    const seed: [number[], number][] = [
      [[1, 2, 4, 8], 1],
      [[4, 8, 16, 32], 2],
      [[16, 32, 64, 128], 16],
    ];
    const queued = seed.map(([points, dp]) =>
      resolveEngineSettings({ orientation: 'o', engine: { ...ENGINE, maxNumSeqs: 5 }, dp, pp: 1, points }),
    );
    expect(queued.map((r) => r.settings.queued.map((q) => q.concurrency))).toEqual([[8], [16, 32], [128]]);
    expect(queued[1]!.warnings).toHaveLength(1);
    expect(queued[1]!.warnings[0]).toContain(
      '--max-num-seqs 5 (engine.maxNumSeqs) is per DP rank: c=16 puts ⌈16/2⌉ = 8, c=32 puts ⌈32/2⌉ = 16 sessions on a rank, so those points measure scheduler queueing',
    );
    expect(queued[1]!.warnings[0]).toContain('unset it to derive 16');
    expect(queued[1]!.settings).toMatchObject({ maxNumSeqs: 5, maxNumSeqsSource: 'pinned' });
    // the orientation's pin wins over the engine's, and a sufficient pin is silent
    const o = resolveEngineSettings({
      orientation: 'bal',
      engine: { ...ENGINE, maxNumSeqs: 5 },
      override: { maxNumSeqs: 16, extraArgs: [], env: {} },
      dp: 2,
      pp: 1,
      points: [4, 8, 16, 32],
    });
    expect(o.settings).toMatchObject({ maxNumSeqs: 16, maxNumSeqsSource: 'pinned', queued: [] });
    expect(o.settings.maxNumSeqsDerivation).toContain('orientations.bal.engine.maxNumSeqs');
    expect(o.warnings).toEqual([]);
  });

  it('orientation overrides: memory utilization, batched tokens, extra args, env', () => {
    const base = resolveEngineSettings({ orientation: 'o', engine: { ...ENGINE, maxNumBatchedTokens: 4096 }, dp: 1, pp: 1, points: [1] });
    expect(base.settings).toMatchObject({ gpuMemoryUtilization: 0.9, maxNumBatchedTokens: 4096, extraArgs: [], env: { A: '1' } });
    const over = resolveEngineSettings({
      orientation: 'o',
      engine: { ...ENGINE, maxNumBatchedTokens: 4096 },
      override: { gpuMemoryUtilization: 0.85, maxNumBatchedTokens: 1024, extraArgs: ['--x'], env: { A: '2', B: '3' } },
      dp: 1,
      pp: 1,
      points: [1],
    });
    expect(over.settings).toMatchObject({
      gpuMemoryUtilization: 0.85,
      maxNumBatchedTokens: 1024,
      extraArgs: ['--x'],
      env: { A: '2', B: '3' },
    });
    expect(resolveEngineSettings({ orientation: 'o', engine: ENGINE, dp: 1, pp: 1, points: [1] }).settings.maxNumBatchedTokens).toBeNull();
  });

  it('PP > 1 runs the V1 model runner; an explicit orientation value is kept with a warning; PP 1 is untouched', () => {
    const v2 = { ...ENGINE, env: { VLLM_USE_V2_MODEL_RUNNER: '1' } };
    const pp = resolveEngineSettings({ orientation: 'o', engine: v2, dp: 1, pp: 2, points: [1] });
    expect(pp.settings.env.VLLM_USE_V2_MODEL_RUNNER).toBe('0');
    expect(pp.notes[0]).toContain('overrides engine.env VLLM_USE_V2_MODEL_RUNNER=1');
    const unset = resolveEngineSettings({ orientation: 'o', engine: { ...ENGINE, env: {} }, dp: 1, pp: 4, points: [1] });
    expect(unset.settings.env.VLLM_USE_V2_MODEL_RUNNER).toBe('0');
    const kept = resolveEngineSettings({
      orientation: 'o',
      engine: v2,
      override: { extraArgs: [], env: { VLLM_USE_V2_MODEL_RUNNER: '1' } },
      dp: 1,
      pp: 2,
      points: [1],
    });
    expect(kept.settings.env.VLLM_USE_V2_MODEL_RUNNER).toBe('1');
    expect(kept.warnings[0]).toContain('sets VLLM_USE_V2_MODEL_RUNNER=1 with PP 2');
    expect(resolveEngineSettings({ orientation: 'o', engine: v2, dp: 1, pp: 1, points: [1] }).settings.env.VLLM_USE_V2_MODEL_RUNNER).toBe(
      '1',
    );
  });

  it('prefix caching off and prompt-token details off are loud', () => {
    expect(
      resolveEngineSettings({ orientation: 'o', engine: { ...ENGINE, prefixCaching: false }, dp: 1, pp: 1, points: [1] }).warnings[0],
    ).toContain('prefix reuse');
    expect(
      resolveEngineSettings({ orientation: 'o', engine: { ...ENGINE, promptTokensDetails: false }, dp: 1, pp: 1, points: [1] }).warnings[0],
    ).toContain('cached_tokens');
  });

  it('in the plan: flags on every node, reserved flags rejected in commonArgs and extraArgs, pinned warning', () => {
    const p = planText(edit('prefixCaching: true', 'prefixCaching: false'), 'latency');
    for (const n of p.nodes) {
      expect(n.argv).toContain('--no-enable-prefix-caching');
      expect(n.argv).not.toContain('--enable-prefix-caching');
    }
    const pinned = planText(edit('# maxNumSeqs: unset', 'maxNumSeqs: 5 #'), 'throughput');
    expect(flag(pinned.nodes[3]!.argv, '--max-num-seqs')).toBe('5');
    expect(pinned.engine.settings.queuedPoints).toEqual([128]);
    expect(pinned.warnings.some((w) => w.includes('c=128 puts ⌈128/16⌉ = 8 sessions on a rank'))).toBe(true);
    const inCommon = planError(edit('    - --trust-remote-code', '    - --trust-remote-code\n    - --max-num-seqs\n    - "5"'), 'latency');
    expect(inCommon.message).toMatch(
      /engine\.commonArgs\[1\]: "--max-num-seqs" — --max-num-seqs is derived, not a common argument: set engine\.maxNumSeqs to pin it/,
    );
    const inExtra = planError(
      edit('engine: { gpuMemoryUtilization: 0.95, maxNumBatchedTokens: 4096 }', 'engine: { extraArgs: [--gpu-memory-utilization=0.5] }'),
      'latency',
    );
    expect(inExtra.message).toContain(
      'orientations.latency.engine.extraArgs[0]: "--gpu-memory-utilization=0.5" — --gpu-memory-utilization is derived',
    );
    const extra = planText(
      edit(
        'engine: { gpuMemoryUtilization: 0.95, maxNumBatchedTokens: 4096 }',
        'engine: { extraArgs: [--enforce-eager], env: { FOO: bar } }',
      ),
      'latency',
    );
    expect(extra.nodes[1]!.commonArgs.slice(-1)).toEqual(['--enforce-eager']);
    expect(extra.nodes[1]!.env.FOO).toBe('bar');
    expect(flag(extra.nodes[0]!.argv, '--gpu-memory-utilization')).toBe('0.95'); // the engine default
  });

  it('points per allocation: the time limit covers that many points, the allocations are counted; allocation-per-point is 1', () => {
    const two = planText(edit('  maxAllocationAttempts: 3', '  maxAllocationAttempts: 3\n  pointsPerAllocation: 2'), 'balanced');
    expect(two.deployment).toMatchObject({ policy: 'shared-server', pointsPerAllocation: 2, allocations: 2 });
    expect(two.slurm.timeLimitDerivation).toContain('startup 7200 s + 2 × (warmup 900 s + profile 3600 s + drain 1800 s)');
    const all = planSweep(loadShipped().config, { orientation: 'balanced', cluster: 'h200' });
    expect(all.deployment.pointsPerAllocation).toBeUndefined();
    expect(all.deployment.allocations).toBe(1);
    expect(all.slurm.timeLimitMinutes).toBeGreaterThan(two.slurm.timeLimitMinutes);
    const ix = planText(edit('  maxAllocationAttempts: 3', '  maxAllocationAttempts: 3\n  pointsPerAllocation: 2'), 'ix-balanced');
    expect(ix.deployment).toMatchObject({ policy: 'allocation-per-point', pointsPerAllocation: 1, allocations: 5 });
  });

  it('aiperf dataset follows the InferenceX model-prefix rule unless set', () => {
    expect(planText(edit('prefix: kimik3', 'prefix: kimik3.1'), 'latency').agentx.aiperf.publicDataset).toBe(
      'semianalysis_cc_traces_weka_062126',
    );
    expect(planText(edit('prefix: kimik3', 'prefix: llama4'), 'latency').agentx.aiperf.publicDataset).toBe(
      'semianalysis_cc_traces_weka_062126_256k',
    );
    const set = planText(edit('agentx:\n  traces:', 'agentx:\n  aiperf: { publicDataset: my_loader }\n  traces:'), 'latency');
    expect(set.agentx.aiperf.publicDataset).toBe('my_loader');
  });
});

/** A dense GQA model whose numbers are easy to redo by hand. */
const DENSE = modelArchitectureSchema.parse({
  weightBytes: 140e9,
  expertWeightBytes: 0,
  layers: 80,
  fullAttention: { kind: 'gqa', layers: 80, kvHeads: 8, headDim: 128 },
  kvCacheDtype: 'bf16',
  runtimeReserveGiB: 0,
});
const base = (over: Partial<CapacityInput> = {}): CapacityInput => ({
  arch: DENSE,
  gpuMemoryBytes: 80e9,
  tp: 4,
  pp: 1,
  dp: 1,
  ep: 1,
  gpuMemoryUtilization: 0.9,
  maxNumSeqs: 8,
  servedContextTokens: 131072,
  traceContextTokens: 32768,
  points: [1, 8, 16],
  ...over,
});

describe('capacity check (plan/capacity.ts)', () => {
  it('dense GQA by hand: weights / TP, pool = budget − weights − reserve, K+V per head per layer', () => {
    const e = estimateCapacity(base());
    expect(e.weightBytesPerGpu).toBe(35e9);
    expect(e.budgetBytesPerGpu).toBe(72e9);
    expect(e.kvPoolBytesPerGpu).toBe(37e9);
    // 80 layers × K,V × 2 heads per rank × 128 × 2 B
    expect(e.kvBytesPerTokenPerGpu).toBe(80 * 2 * 2 * 128 * 2);
    expect(e.kvTokensPerReplica).toBe(Math.floor(37e9 / 81920));
    expect(e.fullContextRequestsPerReplica).toBeCloseTo(451660 / 131072, 4);
    expect(e.points.map((p) => [p.sessionsPerReplica, p.tokensNeededPerReplica, p.fits])).toEqual([
      [1, 32768, true],
      [8, 262144, true],
      [16, 524288, false],
    ]);
    expect(judgeCapacity(e, 'o').verdict).toBe('warn');
  });

  it('GQA heads replicate once TP exceeds the KV heads; MLA latents replicate on every TP rank', () => {
    expect(kvBytesPerTokenPerLayer(DENSE, 1)).toBe(2 * 8 * 128 * 2);
    expect(kvBytesPerTokenPerLayer(DENSE, 8)).toBe(2 * 1 * 128 * 2);
    expect(kvBytesPerTokenPerLayer(DENSE, 16)).toBe(2 * 1 * 128 * 2);
    const mla = modelArchitectureSchema.parse({
      ...DENSE,
      fullAttention: { kind: 'mla', layers: 61, kvLoraRank: 512, qkRopeHeadDim: 64 },
      layers: 61,
    });
    expect(kvBytesPerTokenPerLayer(mla, 1)).toBe(1152);
    expect(kvBytesPerTokenPerLayer(mla, 16)).toBe(1152);
    expect(kvBytesPerTokenPerLayer(modelArchitectureSchema.parse({ ...mla, kvCacheDtype: 'fp8' }), 8)).toBe(576);
  });

  it('PP splits layers (largest stage), EP shards experts, DP divides the sessions', () => {
    const moe = modelArchitectureSchema.parse({ ...DENSE, weightBytes: 1000e9, expertWeightBytes: 960e9 });
    const e = estimateCapacity(base({ arch: moe, tp: 2, pp: 2, dp: 8, ep: 16, gpuMemoryBytes: 150e9, points: [64] }));
    expect(e.weightBytesPerGpu).toBe(960e9 / 32 + 40e9 / 4);
    expect(e.kvBytesPerTokenPerGpu).toBe(40 * 2 * 4 * 128 * 2);
    expect(e.points[0]!.sessionsPerReplica).toBe(8);
    // without EP the experts split over TP ranks only
    expect(estimateCapacity(base({ arch: moe, tp: 8, pp: 2, ep: 1, gpuMemoryBytes: 150e9 })).weightBytesPerGpu).toBe(
      960e9 / 16 + 40e9 / 16,
    );
    // an odd layer count puts the larger half on one stage
    const odd = modelArchitectureSchema.parse({
      ...DENSE,
      layers: 61,
      fullAttention: { kind: 'gqa', layers: 61, kvHeads: 8, headDim: 128 },
    });
    expect(estimateCapacity(base({ arch: odd, pp: 2 })).kvBytesPerTokenPerGpu).toBe(31 * 2 * 2 * 128 * 2);
  });

  it('linear-attention state of every running sequence comes off the pool', () => {
    const hybrid = modelArchitectureSchema.parse({
      ...DENSE,
      layers: 80,
      fullAttention: { kind: 'gqa', layers: 20, kvHeads: 8, headDim: 128 },
      linearAttention: { layers: 60, stateBytesPerSequencePerLayer: 4e6 },
    });
    const e = estimateCapacity(base({ arch: hybrid, maxNumSeqs: 10, pp: 2 }));
    expect(e.linearStateBytesPerGpu).toBe((10 * 30 * 4e6) / 4);
    expect(e.kvPoolBytesPerGpu).toBe(72e9 - 140e9 / 8 - 3e8);
  });

  it('verdicts: refuse when weights leave no pool or one served-context request does not fit; ok otherwise', () => {
    const heavy = estimateCapacity(base({ tp: 1 }));
    expect(heavy.kvPoolBytesPerGpu).toBe(0);
    expect(heavy.kvTokensPerReplica).toBe(0);
    const j = judgeCapacity(heavy, 'solo');
    expect(j.verdict).toBe('refuse');
    expect(j.problems[0]).toContain('orientation solo: weights 140.0 GB');
    const long = judgeCapacity(estimateCapacity(base({ servedContextTokens: 1_048_576 })), 'long');
    expect(long.verdict).toBe('refuse');
    expect(long.problems[0]).toContain(
      'less than one request of the served context (1.05M): vLLM refuses to start; set engine.maxModelLen ≤ 451660',
    );
    const ok = judgeCapacity(estimateCapacity(base({ points: [1, 8] })), 'fine');
    expect(ok).toEqual({ verdict: 'ok', problems: [], warnings: [] });
  });

  it('GPU memory table: H200 is 143771 MiB; unknown GPUs skip the check', () => {
    expect(gpuMemoryBytes('H200')).toBe(143771 * 2 ** 20);
    expect(gpuMemoryBytes('h200')).toBe(143771 * 2 ** 20);
    expect(gpuMemoryBytes('fake')).toBeUndefined();
    const local = planSweep(loadShipped().config, { orientation: 'latency', cluster: 'local' });
    expect(local.capacity).toEqual({
      checked: false,
      reason: 'GPU "fake" has no known memory size (known: H100, H200, B200, GB200, B300, GB300)',
    });
  });

  it('refuses in the plan (model.architecture named), --force plans it with the refusal as a warning', () => {
    const tooBig = edit('weightBytes: 1.5e12', 'weightBytes: 4.5e12');
    const e = planError(tooBig, 'latency');
    expect(e.message).toMatch(
      /model\.architecture: "\(capacity check\)" — orientation latency: weights .* exceed the 143\.2 GB budget .*; or plan with --force/,
    );
    const forced = planText(tooBig, 'latency', { force: true });
    expect(forced.capacity).toMatchObject({ checked: true, verdict: 'refuse', forced: true, kvTokensPerReplica: 0 });
    expect(forced.warnings.some((w) => w.startsWith('capacity (forced): orientation latency: weights'))).toBe(true);
  });

  /**
   * InferenceX on Kimi K3 / H200 (issue 14, from InferenceX's H200 history): the seed's throughput
   * orientation (TP1/PP2/DP16/EP16) held ~1.2 full-context requests of KV per replica, OOMed at c128 and
   * c64/c128 failed to drain; the seed's balanced orientation passed c32. The estimate from the shipped
   * architecture numbers is within 2× of the reported capacity and predicts the same failures under the
   * 1M-context corpus (every session at its full trace context).
   */
  it('Kimi K3 on H200 against what InferenceX reported', () => {
    const million = edit(
      'traces: { kind: synthetic, seed: 42, traces: 64, maxContextTokens: 32768 }',
      'traces: { kind: file, path: /lustre/infersweep/traces/weka_062126 }',
    );
    const tp = planText(million, 'throughput');
    if (!tp.capacity.checked) throw new Error('capacity not checked');
    expect(tp.capacity.fullContextRequestsPerReplica).toBeGreaterThan(1.2 / 2);
    expect(tp.capacity.fullContextRequestsPerReplica).toBeLessThan(1.2 * 2);
    expect(tp.capacity.traceContextTokens).toBe(1_048_576);
    expect(tp.capacity.points.filter((p) => !p.fits).map((p) => p.concurrency)).toEqual([64, 128]);
    expect(tp.capacity.verdict).toBe('warn');
    expect(tp.warnings.some((w) => w.startsWith('capacity: c=64 needs 4 × 1.05M = 4.19M KV tokens per replica'))).toBe(true);
    // balanced passed c32 in the seed: one 1M request fits a replica, so vLLM starts
    const bal = planText(million, 'balanced');
    if (!bal.capacity.checked) throw new Error('capacity not checked');
    expect(bal.capacity.fullContextRequestsPerReplica).toBeGreaterThan(1);
    // the plan JSON stores the numbers
    expect(Object.keys(tp.capacity)).toEqual(expect.arrayContaining(['weightBytesPerGpu', 'kvTokensPerReplica', 'points', 'summary']));
  });
});
