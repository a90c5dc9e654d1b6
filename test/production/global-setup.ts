import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The production tests need scripts/stack-production.sh's stack: bring it up if any part is down. */
export default function setup(): void {
  const script = fileURLToPath(new URL('../../scripts/stack-production.sh', import.meta.url));
  try {
    execFileSync('bash', [script, 'status'], { stdio: 'ignore' });
  } catch {
    execFileSync('bash', [script, 'up'], { stdio: 'inherit' });
  }
}
