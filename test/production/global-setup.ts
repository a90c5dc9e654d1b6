import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ensureWorkflowBundle } from '../global-setup';

/**
 * The production tests need scripts/stack-production.sh's stack: bring it up if any part is down.
 * The workers they spawn load the run's one workflow bundle (../global-setup.ts).
 */
export default async function setup(): Promise<void> {
  const script = fileURLToPath(new URL('../../scripts/stack-production.sh', import.meta.url));
  try {
    execFileSync('bash', [script, 'status'], { stdio: 'ignore' });
  } catch {
    execFileSync('bash', [script, 'up'], { stdio: 'inherit' });
  }
  await ensureWorkflowBundle();
}
