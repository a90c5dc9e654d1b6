/**
 * `infersweep nodes [--cluster P] [--clear NODE...] [--clear-all] [--json]`: the worker's node
 * quarantine (libs/orchestrator/src/quarantine.ts): the nodes a failed attempt implicated, kept out
 * of the cluster's next allocations (`salloc --exclude`) until they expire or are cleared here. It
 * reads and writes the worker's quarantine: PostgreSQL when the history settings
 * (`INFERSWEEP_HISTORY_SETTINGS`) name a PostgreSQL store, else this host's data folder
 * (`INFERSWEEP_DATA`): then run it where the worker runs.
 */
import type { Command } from 'commander';
import { DEFAULT_CLUSTER, openQuarantine, type QuarantineEntry } from '@infersweep/orchestrator';
import { action, out, usageExits, UsageError } from '../ops/cli';

interface NodesOpts {
  cluster: string;
  clear?: string[];
  clearAll?: boolean;
  json?: boolean;
}

export function register(program: Command): void {
  usageExits(
    program
      .command('nodes')
      .description("List the worker's quarantined nodes (kept out of the next allocations); clear them")
      .option('--cluster <profile>', 'cluster profile whose quarantine to show', DEFAULT_CLUSTER)
      .option('--clear <node...>', 'clear these nodes of their quarantine and strikes')
      .option('--clear-all', 'clear every node of the cluster')
      .option('--json', 'print a JSON object: the quarantined nodes and what was cleared')
      .action(
        action('nodes', async (opts: NodesOpts) => {
          if (opts.clear && opts.clearAll) throw new UsageError('give --clear NODE... or --clear-all, not both');
          const store = openQuarantine(opts.cluster);
          try {
            const cleared = opts.clearAll ? await store.clear('all') : opts.clear ? await store.clear(opts.clear) : [];
            const nodes = await store.list();
            if (opts.json) out(JSON.stringify({ cluster: opts.cluster, where: store.where, nodes, cleared }, null, 2));
            else printNodes(opts.cluster, nodes, cleared, opts.clear ?? []);
          } finally {
            await store.close();
          }
        }),
      ),
  );
}

function printNodes(cluster: string, nodes: QuarantineEntry[], cleared: string[], asked: string[]): void {
  for (const n of asked.filter((x) => !cleared.includes(x))) out(`${n}: not quarantined, nothing to clear`);
  if (cleared.length) out(`cleared: ${cleared.join(', ')}`);
  if (nodes.length === 0) {
    out(`no quarantined nodes on ${cluster}`);
    return;
  }
  for (const n of nodes)
    out(
      `${n.node.padEnd(14)} until ${n.until}  ${n.class.padEnd(12)} ${n.rule} (sweep ${n.sweepId}${n.jobId ? `, job ${n.jobId}` : ''}, ${n.strikes} strike(s))${n.evidence ? `\n${' '.repeat(16)}${n.evidence}` : ''}`,
    );
  out(`clear one with \`infersweep nodes --cluster ${cluster} --clear NODE\``);
}
