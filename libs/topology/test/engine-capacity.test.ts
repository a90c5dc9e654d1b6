import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  estimateCapacity,
  gpuMemoryBytes,
  judgeCapacity,
  kvBytesPerTokenPerLayer,
  modelArchitectureSchema,
  OVERCOMMIT,
  THRASH_CONTEXTS,
  parseSweepConfig,
  planSweep,
  resolveEngineSettings,
  type CapacityInput,
} from '../src/index';
import { edit, loadShipped, SHIPPED, shippedText, stackEnv } from './helpers';

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

  it('a pinned value that is too small names every point that will queue (the bash runner bug: 5 per rank against c=8, 32, 128)', () => {
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
    const base = resolveEngineSettings({
      orientation: 'o',
      engine: { ...ENGINE, maxNumBatchedTokens: 4096 },
      dp: 1,
      pp: 1,
      points: [1],
    });
    expect(base.settings).toMatchObject({
      gpuMemoryUtilization: 0.9,
      maxNumBatchedTokens: 4096,
      extraArgs: [],
      env: { A: '1' },
    });
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
    expect(
      resolveEngineSettings({ orientation: 'o', engine: ENGINE, dp: 1, pp: 1, points: [1] }).settings
        .maxNumBatchedTokens,
    ).toBeNull();
  });

  it('PP > 1 runs the V1 model runner; an explicit orientation value is kept with a warning; PP 1 is untouched', () => {
    const v2 = { ...ENGINE, env: { VLLM_USE_V2_MODEL_RUNNER: '1' } };
    const pp = resolveEngineSettings({ orientation: 'o', engine: v2, dp: 1, pp: 2, points: [1] });
    expect(pp.settings.env.VLLM_USE_V2_MODEL_RUNNER).toBe('0');
    expect(pp.notes[0]).toContain('overrides engine.env VLLM_USE_V2_MODEL_RUNNER=1');
    const unset = resolveEngineSettings({
      orientation: 'o',
      engine: { ...ENGINE, env: {} },
      dp: 1,
      pp: 4,
      points: [1],
    });
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
    expect(
      resolveEngineSettings({ orientation: 'o', engine: v2, dp: 1, pp: 1, points: [1] }).settings.env
        .VLLM_USE_V2_MODEL_RUNNER,
    ).toBe('1');
  });

  it('prefix caching off and prompt-token details off are loud', () => {
    expect(
      resolveEngineSettings({
        orientation: 'o',
        engine: { ...ENGINE, prefixCaching: false },
        dp: 1,
        pp: 1,
        points: [1],
      }).warnings[0],
    ).toContain('prefix reuse');
    expect(
      resolveEngineSettings({
        orientation: 'o',
        engine: { ...ENGINE, promptTokensDetails: false },
        dp: 1,
        pp: 1,
        points: [1],
      }).warnings[0],
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
    const inCommon = planError(
      edit('    - --trust-remote-code', '    - --trust-remote-code\n    - --max-num-seqs\n    - "5"'),
      'latency',
    );
    expect(inCommon.message).toMatch(
      /engine\.commonArgs\[1\]: "--max-num-seqs" — --max-num-seqs is derived, not a common argument: set engine\.maxNumSeqs to pin it/,
    );
    const inExtra = planError(
      edit(
        'engine: { gpuMemoryUtilization: 0.95, maxNumBatchedTokens: 4096 }',
        'engine: { extraArgs: [--gpu-memory-utilization=0.5] }',
      ),
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
    const two = planText(
      edit('  maxAllocationAttempts: 3', '  maxAllocationAttempts: 3\n  pointsPerAllocation: 2'),
      'balanced',
    );
    expect(two.deployment).toMatchObject({ policy: 'shared-server', pointsPerAllocation: 2, allocations: 2 });
    expect(two.slurm.timeLimitDerivation).toContain(
      'startup 7200 s + 2 × (warmup 900 s + profile 3600 s + drain 1800 s)',
    );
    const all = planSweep(loadShipped().config, { orientation: 'balanced', cluster: 'h200' });
    expect(all.deployment.pointsPerAllocation).toBeUndefined();
    expect(all.deployment.allocations).toBe(1);
    expect(all.slurm.timeLimitMinutes).toBeGreaterThan(two.slurm.timeLimitMinutes);
    const ix = planText(
      edit('  maxAllocationAttempts: 3', '  maxAllocationAttempts: 3\n  pointsPerAllocation: 2'),
      'ix-balanced',
    );
    expect(ix.deployment).toMatchObject({ policy: 'allocation-per-point', pointsPerAllocation: 1, allocations: 12 });
  });

  it('aiperf dataset follows the InferenceX model-prefix rule unless set', () => {
    expect(planText(edit('prefix: kimik3', 'prefix: kimik3.1'), 'latency').agentx.aiperf.publicDataset).toBe(
      'semianalysis_cc_traces_weka_062126',
    );
    expect(planText(edit('prefix: kimik3', 'prefix: llama4'), 'latency').agentx.aiperf.publicDataset).toBe(
      'semianalysis_cc_traces_weka_062126_256k',
    );
    const set = planText(
      edit('agentx:\n  traces:', 'agentx:\n  aiperf: { publicDataset: my_loader }\n  traces:'),
      'latency',
    );
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
    // running sessions are capped at max-num-seqs (8): c=16 runs 8 at full context, 0.58× the pool
    expect(e.points.map((p) => [p.sessionsPerReplica, p.tokensNeededPerReplica, p.fits])).toEqual([
      [1, 32768, true],
      [8, 262144, true],
      [16, 262144, true],
    ]);
    expect(judgeCapacity(e, 'o').verdict).toBe('ok');
    // overcommitted: 16 running × 32k = 1.16× the pool is absorbed by sessions at different context
    // lengths (≤ OVERCOMMIT); 32 running = 2.3× is flagged
    const wide = estimateCapacity(base({ maxNumSeqs: 64, points: [16, 32] }));
    expect(wide.points.map((p) => [p.tokensNeededPerReplica, p.fits])).toEqual([
      [524288, true],
      [1048576, false],
    ]);
    const j = judgeCapacity(wide, 'o');
    expect(j.verdict).toBe('warn');
    expect(j.warnings[0]).toContain(
      'c=32 runs 32 sessions × 32.8k = 1.05M KV tokens per replica (2.3× the ~451.7k it holds)',
    );
    expect(j.warnings[0]).toContain(`more than ${OVERCOMMIT}× the pool`);
    // thrash: 2 running sessions on a replica holding < THRASH_CONTEXTS full trace contexts
    const tight = estimateCapacity(base({ traceContextTokens: 400_000, servedContextTokens: 400_000, points: [1, 2] }));
    expect(tight.points.map((p) => p.fits)).toEqual([true, false]);
    expect(judgeCapacity(tight, 'o').warnings[0]).toContain(`holds 1.13 full trace contexts (< ${THRASH_CONTEXTS})`);
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
    const tooBig = edit('weightBytes: 1.534e12', 'weightBytes: 4.5e12');
    const e = planError(tooBig, 'latency');
    expect(e.message).toMatch(
      /model\.architecture: "\(capacity check\)" — orientation latency: weights .* exceed the 143\.2 GB budget .*; or plan with --force/,
    );
    const forced = planText(tooBig, 'latency', { force: true });
    expect(forced.capacity).toMatchObject({ checked: true, verdict: 'refuse', forced: true, kvTokensPerReplica: 0 });
    expect(forced.warnings.some((w) => w.startsWith('capacity (forced): orientation latency: weights'))).toBe(true);
  });

  /**
   * Calibration against InferenceX's Kimi K3 / H200 history (docs/inferencex.md, "Capacity check against
   * InferenceX"), under the trace corpus InferenceX replays (aiperf `public`, the 1M-context loader):
   * - TP1/PP2/DP16/EP16 at 0.85 reported 1.16 full-context requests of KV per replica (InferenceX commit
   *   572b85b43) and 1.48M tokens at 0.875 (8abfa19cb); c16 ran, c32 missed the drain deadline
   *   (caa2e206e), c64 and c128 failed to drain (572b85b43);
   * - InferenceX runs TP16×DP2/EP32 at c1…c12 and TP8×DP4/EP32 at c1…c16 (configs/nvidia-master.yaml at 843c6254f).
   */
  const aiperfPublic = (orientation: string, points?: number[]) => {
    const { config, source } = parseSweepConfig(edit('agentx:\n', 'agentx:\n  client: aiperf\n'), {
      file: SHIPPED,
      env: stackEnv,
    });
    return planSweep(config, { orientation, cluster: 'h200', source, ...(points ? { points } : {}) });
  };

  it("Kimi K3 on H200: the estimate reproduces InferenceX's measured KV pools of the throughput arm", () => {
    const shippedUtil = 'engine: { gpuMemoryUtilization: 0.85, maxNumBatchedTokens: 1024 }';
    const at = (util: number) => {
      const text = util === 0.85 ? shippedText : edit(shippedUtil, shippedUtil.replace('0.85', String(util)));
      const p = planText(text, 'throughput');
      if (!p.capacity.checked) throw new Error('capacity not checked');
      return p.capacity;
    };
    // 1.16 full-context (1,048,576-token) requests per replica at 0.85, within 2 %
    expect(at(0.85).fullContextRequestsPerReplica).toBeGreaterThan(1.16 * 0.98);
    expect(at(0.85).fullContextRequestsPerReplica).toBeLessThan(1.16 * 1.02);
    // 1.48M tokens at 0.875, within 2 %
    expect(at(0.875).kvTokensPerReplica).toBeGreaterThan(1.48e6 * 0.98);
    expect(at(0.875).kvTokensPerReplica).toBeLessThan(1.48e6 * 1.02);
    // the fixed per-GPU memory: weights (44.4 GB experts + 57.2 GB the rest) + the 8 GiB runtime reserve
    expect(at(0.85).reserveBytesPerGpu).toBe(8 * 2 ** 30);
    expect(at(0.85).weightBytesPerGpu / 1e9).toBeCloseTo(1.42e3 / 32 + 114 / 2, 0);
  });

  it('Kimi K3 on H200 under the 1M corpus: flags c32, c64, c128 of the throughput arm and none of the points InferenceX ran', () => {
    const tp = aiperfPublic('throughput');
    if (!tp.capacity.checked) throw new Error('capacity not checked');
    expect(tp.capacity.traceContextTokens).toBe(1_048_576);
    expect(tp.capacity.points.filter((p) => !p.fits).map((p) => p.concurrency)).toEqual([32, 64, 128]);
    expect(tp.capacity.verdict).toBe('warn');
    expect(
      tp.warnings.some(
        (w) =>
          w.includes('c=32 runs 2 sessions × 1.05M = 2.10M KV tokens per replica') &&
          w.includes('full trace contexts (< 1.5)'),
      ),
    ).toBe(true);
    for (const [o, top] of [
      ['ix-latency', 12],
      ['ix-balanced', 16],
    ] as const) {
      const p = aiperfPublic(
        o,
        o === 'ix-latency' ? [1, 2, 3, 4, 5, 6, 7, 8, 10, 12] : [1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16],
      );
      if (!p.capacity.checked) throw new Error('capacity not checked');
      expect(p.capacity.traceContextTokens, o).toBe(1_048_576);
      expect(
        p.capacity.points.filter((x) => !x.fits),
        o,
      ).toEqual([]);
      expect(p.capacity.verdict, o).toBe('ok');
      expect(Math.max(...p.capacity.points.map((x) => x.concurrency))).toBe(top);
    }
    // the same arm with the own client's synthetic traces (32k cap) is judged at 32k: nothing to flag
    const synthetic = planText(shippedText, 'throughput');
    if (!synthetic.capacity.checked) throw new Error('capacity not checked');
    expect(synthetic.capacity.traceContextTokens).toBe(32768);
    expect(synthetic.capacity.verdict).toBe('ok');
    // trace files are judged at the served context; the _256k corpus at 256 000 tokens
    const file = planText(
      edit(
        'traces: { kind: synthetic, seed: 42, traces: 64, maxContextTokens: 32768 }',
        'traces: { kind: file, path: /lustre/t }',
      ),
      'throughput',
    );
    expect(file.capacity.checked && file.capacity.traceContextTokens).toBe(1_048_576);
    const k256 = parseSweepConfig(
      edit('agentx:\n', 'agentx:\n  client: aiperf\n').replace('prefix: kimik3', 'prefix: llama4'),
      {
        file: SHIPPED,
        env: stackEnv,
      },
    );
    const p256 = planSweep(k256.config, { orientation: 'throughput', cluster: 'h200', source: k256.source });
    expect(p256.capacity.checked && p256.capacity.traceContextTokens).toBe(256_000);
  });
});
