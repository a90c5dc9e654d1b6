/** What `infersweep nodes` runs (its options are in ../commands/nodes.ts). */
import { openQuarantine, type QuarantineEntry } from '@infersweep/orchestrator';
import { out, UsageError } from '../ops/cli';

export interface NodesOpts {
  cluster: string;
  clear?: string[];
  clearAll?: boolean;
  json?: boolean;
}

export async function nodes(opts: NodesOpts): Promise<void> {
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
