import type { VllmCpuOverride } from '../config/schema';

/**
 * The vllm-cpu engine override (pure): the planner's own `vllm serve` argv and environment for one node,
 * changed only where vLLM's CPU build requires it (docs/vllm-cpu.md). Everything else — the topology
 * flags, per-node deltas, ports, served name, common arguments — is launched exactly as a GPU cluster
 * would get it. Every change is named in `differences`, which `plan` prints.
 */
export interface CpuLaunch {
  launchArgv: string[];
  env: Record<string, string>;
}

/** Flags the override sets itself; if engine.commonArgs has them too, the override's value wins (and says so). */
const SET_BY_OVERRIDE = [
  '--load-format',
  '--kv-cache-memory-bytes',
  '--compilation-config',
  '-cc',
  '-O',
  '--enforce-eager',
];
const TAKES_NO_VALUE = new Set(['--enforce-eager']);

/** Remove `flag` (and its value unless it is a switch) from argv; returns the removed pieces. */
export function removeFlag(argv: string[], flag: string): string[][] {
  const removed: string[][] = [];
  for (let i = 0; i < argv.length;) {
    const a = argv[i]!;
    if (a === flag) {
      const next = argv[i + 1];
      const withValue = !TAKES_NO_VALUE.has(flag) && next !== undefined && !next.startsWith('--');
      removed.push(argv.splice(i, withValue ? 2 : 1));
    } else if (a.startsWith(`${flag}=`)) {
      removed.push(argv.splice(i, 1));
    } else i++;
  }
  return removed;
}

/** The thread binding of node `rank`: entry rank mod length. */
export const ompBindOf = (o: VllmCpuOverride, rank: number): string =>
  o.ompThreadsBind[rank % o.ompThreadsBind.length]!;

/**
 * How the CPU build compiles: a pipeline stage after the first asserts at its first request under
 * `--enforce-eager` (its warm-up is skipped), so PP > 1 gets the compilation config; everything else runs
 * eager (it starts faster, and torch.compile cannot trace the plugin's variable-size MoE collectives).
 */
export const compileArgs = (o: VllmCpuOverride, pp: number): string[] =>
  pp > 1 ? ['--compilation-config', o.compilationConfig] : ['--enforce-eager'];

export function cpuLaunch(
  node: { rank: number; argv: readonly string[]; env: Readonly<Record<string, string>> },
  o: VllmCpuOverride,
  pp: number,
): CpuLaunch {
  const argv = [...node.argv];
  argv[0] = o.binary;
  argv[2] = o.modelPath;
  for (const f of [...o.dropArgs, ...SET_BY_OVERRIDE]) removeFlag(argv, f);
  argv.push(
    '--load-format',
    o.loadFormat,
    '--kv-cache-memory-bytes',
    String(o.kvCacheMemoryBytes),
    ...compileArgs(o, pp),
  );
  const env: Record<string, string> = { ...node.env, ...o.env, VLLM_CPU_OMP_THREADS_BIND: ompBindOf(o, node.rank) };
  delete env.CUDA_VISIBLE_DEVICES;
  return { launchArgv: argv, env };
}

/**
 * What the override changes, for `plan` (one line each). `argv` is a node's planned `vllm serve` argv (to
 * name the flags actually dropped; they are common to all nodes), `nodes` the node count (for the
 * per-node thread binding).
 */
export function cpuDifferences(o: VllmCpuOverride, argv: readonly string[], nodes: number, pp: number): string[] {
  const out = [
    `executable: ${argv[0] ?? 'vllm'} → ${o.binary}`,
    `model path: ${argv[2] ?? '?'} → ${o.modelPath} (config + tokenizer only)`,
  ];
  const probe = argv.slice(3);
  for (const f of o.dropArgs) {
    for (const r of removeFlag(probe, f)) out.push(`removed ${r.join(' ')} (not applicable on the CPU build)`);
  }
  for (const f of SET_BY_OVERRIDE) {
    for (const r of removeFlag(probe, f)) out.push(`removed ${r.join(' ')} (the vllm-cpu override sets it)`);
  }
  out.push(
    `added --load-format ${o.loadFormat}${o.loadFormat === 'dummy' ? ' (random weights: numbers measure the orchestration, not a model)' : ''}`,
  );
  out.push(
    `added --kv-cache-memory-bytes ${o.kvCacheMemoryBytes} (bounded KV cache instead of GPU memory utilisation)`,
  );
  out.push(
    pp > 1
      ? `added --compilation-config ${o.compilationConfig} (a later pipeline stage fails under --enforce-eager: its warm-up is skipped)`
      : "added --enforce-eager (no torch.compile: faster start; it cannot trace the plugin's MoE collectives)",
  );
  out.push(
    `env VLLM_CPU_OMP_THREADS_BIND per node: ${Array.from({ length: nodes }, (_, k) => `node ${k} → ${ompBindOf(o, k)}`).join(', ')}`,
  );
  const added = Object.entries(o.env).map(([k, v]) => `${k}=${v}`);
  if (added.length > 0) out.push(`env added: ${added.join(' ')}`);
  out.push('env removed: CUDA_VISIBLE_DEVICES (no GPUs); VLLM_HOST_IP stays the node address (rule 17)');
  return out;
}
