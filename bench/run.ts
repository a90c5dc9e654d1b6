/**
 * Benchmarks (not tests): `npm run bench -- <name> [options]`. Each bench bounds its own run time.
 *   agentx    infersweep's AgentX client vs aiperf against the same simulator (ratios), + peak RSS at c=128 / 100k prompts
 *   ceiling   the client's tokens per CPU-second as a fraction of a bare reader and of a raw-socket reader
 *   timing    receive − send per event against the bench's tick server: the client, aiperf, the bare reader
 *   overhead  a real local sweep's wall time outside the profiled windows, from its Temporal history
 *   scaling   the client's CPU and memory vs concurrency and context length
 *   replicates GPU-hours of a 6-point sweep: replicates of every point, of the search's answer, a single pass
 *   all       ceiling, timing, overhead and scaling in one run, then a summary of the ratios
 */
import { agentxBench } from './agentx';
import { ceilingBench } from './ceiling';
import { overheadBench } from './overhead';
import { replicatesBench } from './replicates';
import { scalingBench } from './scaling';
import { timingBench } from './timing';
import { summaryLines } from './lib/summary';

/** `all` runs every bench with its defaults; only `--cluster P` (overhead) and `--no-aiperf` (timing) pass through. */
async function all(argv: string[]): Promise<void> {
  const args: string[] = [];
  const ci = argv.indexOf('--cluster');
  if (ci >= 0 && argv[ci + 1]) args.push('--cluster', argv[ci + 1]!);
  if (argv.includes('--no-aiperf')) args.push('--no-aiperf');
  const t0 = performance.now();
  const started = new Date().toISOString();
  const ceiling = await ceilingBench([]);
  const timing = await timingBench(args);
  const overhead = await overheadBench(args).catch((e: unknown) => {
    console.log(`\n# Orchestration overhead — FAILED: ${(e as Error).message}`);
    return null;
  });
  const scaling = await scalingBench([]);
  console.log(
    `\n# Summary — npm run bench -- all${args.length ? ` ${args.join(' ')}` : ''} (started ${started}, ${((performance.now() - t0) / 60000).toFixed(1)} min)`,
  );
  for (const l of summaryLines({
    ceiling: ceiling.ratios,
    timing: timing.rows,
    overhead: overhead?.report ?? null,
    scaling: scaling.rows,
  }))
    console.log(l);
}

const benches: Record<string, (args: string[]) => Promise<unknown>> = {
  agentx: agentxBench,
  ceiling: ceilingBench,
  timing: timingBench,
  overhead: overheadBench,
  scaling: scalingBench,
  replicates: replicatesBench,
  all,
};

async function main(): Promise<void> {
  const [name, ...args] = process.argv.slice(2);
  const bench = name ? benches[name] : undefined;
  if (!bench) {
    console.error(`usage: npm run bench -- <${Object.keys(benches).join('|')}> [options]`);
    process.exit(2);
  }
  await bench(args);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
