import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { dataDirOf, parseStackEnv, repoRoot, stackEnvFile } from '@infersweep/core';

export { repoRoot };
export const dataDir = dataDirOf(process.env);
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
  /** a user whose login shell is csh, when the host has one (the SSH executor's shell-agnostic test) */
  INFERSWEEP_SSH_CSH_USER?: string;
}

export function stackEnv(): StackEnv {
  return parseStackEnv(readFileSync(stackEnvFile(dataDir), 'utf8')) as unknown as StackEnv;
}

export const simBinary = join(toolsDir, 'bin', 'llm-d-inference-sim');
export const temporalBinary = join(toolsDir, 'bin', 'temporal');
