import type { Topology } from './validate';
import { DP_RPC_PORT, HEAD_ADDR, MASTER_PORT, PORT } from './placeholders';

/**
 * Rules 6–15: a validated topology → one `vllm serve` argv per node. Every node gets the same
 * common list (rule 9) plus its own delta. Values known only after allocation are placeholders.
 */
export interface VllmEngineInput {
  modelPath: string;
  servedName: string;
  /** engine.commonArgs, already checked by `checkCommonArgs`. */
  commonArgs: readonly string[];
  maxModelLen?: number | undefined;
  all2allBackend?: string | undefined;
  apiServerCount?: number | undefined;
  eplb?:
    { numRedundantExperts: number; windowSize?: number | undefined; stepInterval?: number | undefined } | undefined;
  /** Derived per orientation by the planner (libs/topology/src/plan/engine.ts); emitted on every node. */
  gpuMemoryUtilization?: number | undefined;
  maxNumSeqs?: number | undefined;
  maxNumBatchedTokens?: number | undefined;
  prefixCaching?: boolean | undefined;
  promptTokensDetails?: boolean | undefined;
  /** The orientation's extra arguments, after commonArgs. */
  extraArgs?: readonly string[] | undefined;
}

export interface NodeCommand {
  rank: number;
  /** Serves HTTP (has --port). */
  serves: boolean;
  /** Identical on every node. */
  commonArgs: string[];
  /** This node's delta. */
  deltaArgs: string[];
  /** `['vllm', 'serve', model, ...commonArgs, ...deltaArgs]`. */
  argv: string[];
  /** DP ranks whose engines run on this node (empty for executor-only followers). */
  dpRanks: number[];
}

export const ENTRYPOINT = ['vllm', 'serve'] as const;

export function topologyCommonArgs(t: Topology, e: VllmEngineInput): string[] {
  const args = ['-tp', String(t.tp), '-pp', String(t.pp)];
  if (t.dp > 1) args.push('-dp', String(t.dp));
  if (t.expertParallel) {
    args.push('--enable-expert-parallel');
    if (e.all2allBackend !== undefined) args.push('--all2all-backend', e.all2allBackend);
    if (e.eplb !== undefined) {
      const cfg: Record<string, number> = { num_redundant_experts: e.eplb.numRedundantExperts };
      if (e.eplb.windowSize !== undefined) cfg.window_size = e.eplb.windowSize;
      if (e.eplb.stepInterval !== undefined) cfg.step_interval = e.eplb.stepInterval;
      args.push('--enable-eplb', '--eplb-config', JSON.stringify(cfg));
    }
  }
  args.push('--served-model-name', e.servedName);
  if (e.maxModelLen !== undefined) args.push('--max-model-len', String(e.maxModelLen));
  if (e.gpuMemoryUtilization !== undefined) args.push('--gpu-memory-utilization', String(e.gpuMemoryUtilization));
  if (e.maxNumSeqs !== undefined) args.push('--max-num-seqs', String(e.maxNumSeqs));
  if (e.maxNumBatchedTokens !== undefined) args.push('--max-num-batched-tokens', String(e.maxNumBatchedTokens));
  if (e.prefixCaching !== undefined)
    args.push(e.prefixCaching ? '--enable-prefix-caching' : '--no-enable-prefix-caching');
  if (e.promptTokensDetails) args.push('--enable-prompt-tokens-details');
  args.push(...e.commonArgs, ...(e.extraArgs ?? []));
  return args;
}

function serveArgs(e: VllmEngineInput): string[] {
  const a = ['--port', PORT];
  if (e.apiServerCount !== undefined) a.push('--api-server-count', String(e.apiServerCount));
  return a;
}

/** What one node adds to the common argv: its flags, whether it serves the API, and its DP ranks. */
interface NodeDelta {
  delta: string[];
  serves: boolean;
  dpRanks: number[];
}

export function buildNodeCommands(t: Topology, e: VllmEngineInput): NodeCommand[] {
  const common = topologyCommonArgs(t, e);
  const out: NodeCommand[] = [];
  for (let k = 0; k < t.nodes; k++) {
    const { delta, serves, dpRanks } = t.replica === 'spans-nodes' ? spanningNode(t, e, k) : dataParallelNode(t, e, k);
    out.push({
      rank: k,
      serves,
      commonArgs: [...common],
      deltaArgs: delta,
      argv: [...ENTRYPOINT, e.modelPath, ...common, ...delta],
      dpRanks,
    });
  }
  return out;
}

/** Rules 10 and 12: a replica spanning nodes, the multiprocessing multi-node form; only node 0 serves. */
function spanningNode(t: Topology, e: VllmEngineInput, k: number): NodeDelta {
  const delta = ['--nnodes', String(t.nodes), '--node-rank', String(k)];
  delta.push('--master-addr', HEAD_ADDR, '--master-port', MASTER_PORT);
  if (k === 0) delta.push(...serveArgs(e));
  else delta.push('--headless');
  return { delta, serves: k === 0, dpRanks: k % t.nodesPerReplica === 0 ? [k / t.nodesPerReplica] : [] };
}

/** Replicas within a node: data-parallel ranks by the load-balancing mode (rule 11 for internal). */
function dataParallelNode(t: Topology, e: VllmEngineInput, k: number): NodeDelta {
  const L = t.dpLocal ?? 1;
  const dpRanks = Array.from({ length: L }, (_, i) => k * L + i);
  const rpc = ['--data-parallel-address', HEAD_ADDR, '--data-parallel-rpc-port', DP_RPC_PORT];
  if (t.dp === 1) return { delta: serveArgs(e), serves: true, dpRanks };
  if (t.lbMode === 'internal') {
    // Rule 11: node 0 serves and never gets a start rank; the others are headless.
    const delta = ['--data-parallel-size-local', String(L), ...rpc];
    if (k === 0) return { delta: [...delta, ...serveArgs(e)], serves: true, dpRanks };
    return { delta: [...delta, '--headless', '--data-parallel-start-rank', String(k * L)], serves: false, dpRanks };
  }
  if (t.lbMode === 'hybrid') {
    const local = ['--data-parallel-size-local', String(L), '--data-parallel-start-rank', String(k * L)];
    return { delta: ['--data-parallel-hybrid-lb', ...local, ...rpc, ...serveArgs(e)], serves: true, dpRanks };
  }
  return { delta: ['--data-parallel-rank', String(k), ...rpc, ...serveArgs(e)], serves: true, dpRanks };
}

/** Flags that are derived from the topology/config and so may not appear in engine.commonArgs. */
const RESERVED: ReadonlyArray<[string[], string]> = [
  [['-tp', '--tensor-parallel-size'], 'set orientations.<name>.topology.tp'],
  [['-pp', '--pipeline-parallel-size'], 'set orientations.<name>.topology.pp'],
  [['-dp', '--data-parallel-size'], 'set orientations.<name>.topology.dp'],
  [
    ['-ep', '--enable-expert-parallel', '--no-enable-expert-parallel'],
    'set orientations.<name>.topology.ep (= TP×DP) to enable expert parallelism',
  ],
  [
    [
      '-dpl',
      '--data-parallel-size-local',
      '--data-parallel-start-rank',
      '-dpr',
      '--data-parallel-rank',
      '-dpa',
      '--data-parallel-address',
      '-dpp',
      '--data-parallel-rpc-port',
      '--headless',
      '--nnodes',
      '-n',
      '--node-rank',
      '-r',
      '--master-addr',
      '--master-port',
      '--port',
      '--host',
    ],
    'per-node flags and ports are derived by the planner (rules 10–12, 16)',
  ],
  [
    [
      '-dph',
      '--data-parallel-hybrid-lb',
      '-dpe',
      '--data-parallel-external-lb',
      '-dpm',
      '--data-parallel-multi-port-external-lb',
    ],
    'set orientations.<name>.topology.lbMode',
  ],
  [['--api-server-count', '-asc'], 'set engine.apiServerCount'],
  [['--kv-transfer-config'], 'set orientations.<name>.disaggregated.connector (rule 24)'],
  [['--max-model-len'], 'set engine.maxModelLen'],
  [['--all2all-backend'], 'set engine.all2allBackend'],
  [['--enable-eplb', '--eplb-config', '--num-redundant-experts'], 'set engine.eplb'],
  [['--served-model-name', '--model'], 'set model.servedName / model.path'],
  [
    ['--gpu-memory-utilization'],
    'set engine.gpuMemoryUtilization (or orientations.<name>.engine.gpuMemoryUtilization)',
  ],
  [
    ['--max-num-seqs'],
    'set engine.maxNumSeqs to pin it; unset it is derived per orientation as ⌈max concurrency / DP⌉',
  ],
  [['--max-num-batched-tokens'], 'set engine.maxNumBatchedTokens (or orientations.<name>.engine.maxNumBatchedTokens)'],
  [['--enable-prefix-caching', '--no-enable-prefix-caching'], 'set engine.prefixCaching'],
  [['--enable-prompt-tokens-details', '--no-enable-prompt-tokens-details'], 'set engine.promptTokensDetails'],
];

export interface ArgProblem {
  index: number;
  arg: string;
  message: string;
}

/** Reject derived/per-node flags, removed flags and wrong entrypoints in engine.commonArgs. */
export function checkCommonArgs(args: readonly string[]): ArgProblem[] {
  const problems: ArgProblem[] = [];
  args.forEach((arg, index) => {
    const flag = arg.split('=')[0] ?? arg;
    for (const [flags, fix] of RESERVED) {
      if (flags.includes(flag))
        problems.push({ index, arg, message: `${flag} is derived, not a common argument: ${fix}` });
    }
    if (/^(python[0-9.]*|-m|vllm\.entrypoints.*|vllm|serve)$/.test(arg)) {
      problems.push({
        index,
        arg,
        message: 'the entrypoint is always `vllm serve <model>` (rule 15); list only arguments',
      });
    }
    if (arg.trim() === '') problems.push({ index, arg, message: 'empty argument' });
  });
  return problems;
}

const LB_FLAGS = [
  '--data-parallel-hybrid-lb',
  '--data-parallel-external-lb',
  '--data-parallel-multi-port-external-lb',
  '--data-parallel-rank',
];

function flagValue(argv: readonly string[], flag: string): string | undefined {
  const i = argv.indexOf(flag);
  return i >= 0 ? argv[i + 1] : undefined;
}

/**
 * Invariants every generated deployment must satisfy (rules 6, 9–15). Used as the planner's
 * self-check and by the tests. Returns human-readable violations (empty = fine).
 */
export function checkLaunchInvariants(t: Topology, nodes: readonly NodeCommand[], modelPath: string): string[] {
  const bad: string[] = [];
  if (nodes.length !== t.nodes) bad.push(`expected ${t.nodes} node commands, got ${nodes.length}`);
  const common0 = JSON.stringify(nodes[0]?.commonArgs ?? []);
  const dpSeen: number[] = [];
  for (const n of nodes) {
    const a = n.argv;
    const at = `node ${n.rank}`;
    if (a[0] !== 'vllm' || a[1] !== 'serve' || a[2] !== modelPath)
      bad.push(`${at}: argv must start with vllm serve ${modelPath} (rule 15)`);
    if (JSON.stringify(n.commonArgs) !== common0) bad.push(`${at}: common args differ from node 0 (rule 9)`);
    if (JSON.stringify(a) !== JSON.stringify([...ENTRYPOINT, modelPath, ...n.commonArgs, ...n.deltaArgs]))
      bad.push(`${at}: argv is not entrypoint + common + delta`);
    if (a.some((x) => x.trim() === '')) bad.push(`${at}: empty argument in argv`);
    const has = (f: string) => a.includes(f);
    if (has('--enable-expert-parallel') !== t.expertParallel)
      bad.push(`${at}: --enable-expert-parallel must be present iff EP > 1 (rule 6)`);
    if (has('--all2all-backend') && !t.expertParallel) bad.push(`${at}: --all2all-backend without EP (rule 8)`);
    const headless = has('--headless');
    if (headless && (has('--api-server-count') || has('--data-parallel-hybrid-lb') || has('--data-parallel-rank'))) {
      bad.push(`${at}: --headless with --api-server-count/--data-parallel-hybrid-lb/--data-parallel-rank (rule 14)`);
    }
    if (t.lbMode === 'internal' && !headless && has('--data-parallel-start-rank')) {
      bad.push(`${at}: --data-parallel-start-rank on a serving node turns on hybrid LB (rule 14)`);
    }
    if (LB_FLAGS.filter(has).length > 1) bad.push(`${at}: more than one LB-mode flag (rule 14)`);
    const nnodes = Number(flagValue(a, '--nnodes') ?? '1');
    if (
      nnodes > 1 &&
      (flagValue(a, '--distributed-executor-backend') === 'ray' || flagValue(a, '--data-parallel-backend') === 'ray')
    ) {
      bad.push(`${at}: --nnodes > 1 with a Ray backend (rule 14)`);
    }
    if (has('--port') !== n.serves || headless === n.serves)
      bad.push(`${at}: exactly the serving nodes get --port and the others --headless`);
    if (t.lbMode === 'internal' && n.serves !== (n.rank === 0))
      bad.push(`${at}: internal LB serves from node 0 only (rule 11)`);
    if (t.replica === 'spans-nodes') {
      if (flagValue(a, '--node-rank') !== String(n.rank) || flagValue(a, '--nnodes') !== String(t.nodes))
        bad.push(`${at}: --nnodes/--node-rank wrong (rule 10/12)`);
      if (has('--data-parallel-start-rank') || has('--data-parallel-size-local'))
        bad.push(`${at}: spanning replica must not get DP placement flags (rule 10/12)`);
    } else if (t.dp > 1 && t.lbMode !== 'external') {
      const L = t.dpLocal ?? 0;
      if (flagValue(a, '--data-parallel-size-local') !== String(L))
        bad.push(`${at}: --data-parallel-size-local must be ${L}`);
      const start = flagValue(a, '--data-parallel-start-rank');
      const want = n.rank === 0 && t.lbMode === 'internal' ? undefined : String(n.rank * L);
      if (start !== want)
        bad.push(
          `${at}: --data-parallel-start-rank is ${start ?? '(absent)'}, expected ${want ?? '(absent)'} (rule 11/13)`,
        );
    }
    dpSeen.push(...n.dpRanks);
  }
  const sorted = [...dpSeen].sort((x, y) => x - y);
  if (JSON.stringify(sorted) !== JSON.stringify(Array.from({ length: t.dp }, (_, i) => i))) {
    bad.push(`DP ranks placed ${JSON.stringify(sorted)} do not cover 0..${t.dp - 1} exactly once`);
  }
  return bad;
}
