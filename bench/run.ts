/**
 * Benchmarks (not tests): `npm run bench -- <name> [options]`. Each bench bounds its own run time.
 *   agentx   infersweep's AgentX client vs aiperf against the same simulator (ratios), + peak RSS at c=128 / 100k prompts
 */
import { agentxBench } from './agentx';

const benches: Record<string, (args: string[]) => Promise<void>> = { agentx: agentxBench };

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
