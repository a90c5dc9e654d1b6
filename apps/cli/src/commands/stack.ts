/**
 * `infersweep stack up|down|status|env`: the local stack (munge, slurmctld, 4 slurmd, sshd,
 * Temporal dev server + Web UI, simulator) of scripts/stack.sh; idempotent.
 */
import type { Command } from 'commander';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from '@infersweep/core';
import { action, usageExits, UsageError } from '../ops/cli';

const VERBS = ['up', 'down', 'status', 'env'];

export function register(program: Command): void {
  usageExits(
    program
      .command('stack')
      .description('Bring the local stack up or down, or show its status (scripts/stack.sh)')
      .argument('<verb>', `one of ${VERBS.join(', ')}`)
      .action(
        action('stack', async (verb: string) => {
          if (!VERBS.includes(verb))
            throw new UsageError(
              `unknown verb ${JSON.stringify(verb)}; use one of: ${VERBS.join(', ')} (e.g. infersweep stack status)`,
            );
          const r = spawnSync('bash', [join(repoRoot, 'scripts', 'stack.sh'), verb], { stdio: 'inherit' });
          return r.status ?? 1;
        }),
      ),
  );
}
