/**
 * Real DCGM exporter scrapes (libs/agentx/test/data/dcgm-exporter-captures.txt, one per
 * `# capture name=<id> host=<node>` section, each section citing its source) and the per-request
 * token count an energy-per-token figure divides by. Shared by the energy tests of libs/agentx
 * (energy.test.ts, aiperf-energy.test.ts) and libs/orchestrator (gpu-energy.int.test.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const CAPTURES_FILE = join(__dirname, '../../agentx/test/data/dcgm-exporter-captures.txt');

/** DataDog's recorded Tesla T4 scrape: its DCGM_FI_DEV_POWER_USAGE. */
export const T4_WATTS = 8.969;

/** Every capture by name: the node it was scraped on and the exposition text as the exporter sent it. */
export function dcgmCaptures(): Record<string, { host: string; text: string }> {
  return Object.fromEntries(
    readFileSync(CAPTURES_FILE, 'utf8')
      .split(/^# capture name=(\S+) host=(\S+)\n/m)
      .slice(1)
      .reduce<[string, { host: string; text: string }][]>((acc, x, i, all) => {
        if (i % 3 === 0) acc.push([x, { host: all[i + 1]!, text: all[i + 2]! }]);
        return acc;
      }, []),
  );
}

/** Input + output tokens of the successful profiled requests in a record's requests.jsonl. */
export function profiledTokens(requestsJsonl: string): number {
  return readFileSync(requestsJsonl, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as { phase: string; ok: boolean; isl: number | null; osl: number | null })
    .filter((r) => r.phase === 'profiling' && r.ok)
    .reduce((a, r) => a + (r.isl ?? 0) + (r.osl ?? 0), 0);
}
