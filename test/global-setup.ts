import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Integration tests need the local stack: bring it up if `status` says any part is down. */
export default function setup(): void {
  const script = fileURLToPath(new URL('../scripts/stack.sh', import.meta.url));
  try {
    execFileSync('bash', [script, 'status'], { stdio: 'ignore' });
  } catch {
    execFileSync('bash', [script, 'up'], { stdio: 'inherit' });
  }
}
