/**
 * `infersweep nodes [--cluster P] [--clear NODE...] [--clear-all] [--json]`: the worker's node
 * quarantine (libs/orchestrator/src/quarantine.ts): the nodes a failed attempt implicated, kept out
 * of the cluster's next allocations (`salloc --exclude`) until they expire or are cleared here. It
 * reads and writes the worker's quarantine: PostgreSQL when the history settings
 * (`INFERSWEEP_HISTORY_SETTINGS`) name a PostgreSQL store, else this host's data folder
 * (`INFERSWEEP_DATA`): then run it where the worker runs.
 */
import type { Command } from 'commander';
import { DEFAULT_CLUSTER } from '@infersweep/core';
import { action, usageExits } from '../ops/cli';
import type { NodesOpts } from '../actions/nodes';

export function register(program: Command): void {
  usageExits(
    program
      .command('nodes')
      .description("List the worker's quarantined nodes (kept out of the next allocations); clear them")
      .option('--cluster <profile>', 'cluster profile whose quarantine to show', DEFAULT_CLUSTER)
      .option('--clear <node...>', 'clear these nodes of their quarantine and strikes')
      .option('--clear-all', 'clear every node of the cluster')
      .option('--json', 'print a JSON object: the quarantined nodes and what was cleared')
      .action(action('nodes', async (opts: NodesOpts) => (await import('../actions/nodes')).nodes(opts))),
  );
}
