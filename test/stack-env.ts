import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

export const repoRoot = fileURLToPath(new URL('..', import.meta.url));
export const dataDir = process.env.INFERSWEEP_DATA ?? join(repoRoot, '.infersweep');
export const toolsDir = process.env.INFERSWEEP_TOOLS ?? join(repoRoot, '.tools');

/** The values scripts/stack.sh wrote for the running local stack (`.infersweep/stack/env`). */
export interface StackEnv {
  SLURM_CONF: string;
  INFERSWEEP_STACK: string;
  INFERSWEEP_SSH_HOST: string;
  INFERSWEEP_SSH_PORT: string;
  INFERSWEEP_SSH_USER: string;
  INFERSWEEP_SSH_KEY: string;
  INFERSWEEP_SSH_HOST_KEY: string;
  INFERSWEEP_SSH_KNOWN_HOSTS: string;
  INFERSWEEP_SHARED: string;
  INFERSWEEP_TEMPORAL_ADDRESS: string;
  INFERSWEEP_TEMPORAL_UI: string;
  INFERSWEEP_SIM_URL: string;
  INFERSWEEP_PARTITION: string;
}

export function stackEnv(): StackEnv {
  const file = join(dataDir, 'stack', 'env');
  const out: Record<string, string> = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const i = line.indexOf('=');
    if (i > 0) out[line.slice(0, i)] = line.slice(i + 1);
  }
  return out as unknown as StackEnv;
}

export const simBinary = join(toolsDir, 'bin', 'llm-d-inference-sim');
export const temporalBinary = join(toolsDir, 'bin', 'temporal');
