/**
 * `infersweep janitor [--apply] [--cluster P] [--config F] [--name-contains S] [--json]`:
 * Slurm allocations of the login user (`squeue --me`) that carry THIS deployment's job-name prefix
 * (`infersweep-<deployment tag>-`, libs/core deploymentTag: Temporal namespace + INFERSWEEP_DEPLOYMENT_ID)
 * but whose sweep is closed or unknown to Temporal (leaked by a crash, a lost worker, a deleted
 * workflow). Lists them; cancels them with `--apply`. Jobs of running sweeps, of other deployments
 * sharing the login account, and job arrays / het jobs are never touched; without Temporal it
 * refuses to judge.
 */
import type { Command } from 'commander';
import { DEFAULT_CLUSTER, DEFAULT_CONFIG } from '@infersweep/core';
import { action, usageExits } from '../ops/cli';
import type { JanitorOpts } from '../actions/janitor';

export function register(program: Command): void {
  usageExits(
    program
      .command('janitor')
      .description(
        "List (and with --apply cancel) this deployment's Slurm allocations (infersweep-<tag>-*) whose sweep is closed or unknown",
      )
      .option('--apply', 'cancel the orphaned allocations (default: only list)')
      .option('--cluster <profile>', 'cluster profile (its login host is queried)', DEFAULT_CLUSTER)
      .option('-c, --config <file>', 'sweep config holding the cluster profile', DEFAULT_CONFIG)
      .option('--name-contains <text>', 'only jobs whose name contains this text')
      .option('--json', 'print a JSON array of verdicts')
      .action(action('janitor', async (opts: JanitorOpts) => (await import('../actions/janitor')).janitor(opts))),
  );
}
