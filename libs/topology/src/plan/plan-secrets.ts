import { SECRET_LIKE } from '../config/env';
import type { PlanDraft } from './draft';

/** Variables the planner sets per node (build-nodes.ts). */
export const DERIVED_ENV = [
  'VLLM_HOST_IP',
  'CUDA_VISIBLE_DEVICES',
  'GLOO_SOCKET_IFNAME',
  'NCCL_SOCKET_IFNAME',
  'VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS',
];

/**
 * The secret variables' names (engine.secretEnv ∪ the cluster's): names only, never a value. A
 * credential typed into engine.env would be expanded into the plan (and so into the workflow
 * history, plan.json and srun's argv): refused, with the fix. A name is plain or secret, not both,
 * and never one the planner derives.
 */
export function planSecrets(d: PlanDraft): string[] {
  const { issues } = d;
  const engine = d.config.engine;
  const cluster = d.opts.cluster;
  for (const k of Object.keys(engine.env)) {
    if (SECRET_LIKE.test(k)) {
      issues.add(
        ['engine', 'env', k],
        '(value not shown)',
        `looks like a credential: engine.env values are stored in the plan and the workflow history. Move the name to engine.secretEnv (e.g. secretEnv: [${k}]) and give the value to the worker (its environment or clusters.${cluster}.secretsFile)`,
      );
    }
  }
  const secretEnv = [...new Set([...engine.secretEnv, ...d.cluster.secretEnv])];
  for (const k of secretEnv) {
    const where = engine.secretEnv.includes(k) ? ['engine', 'secretEnv'] : ['clusters', cluster, 'secretEnv'];
    if (engine.env[k] !== undefined)
      issues.add(
        where,
        k,
        `${k} is also in engine.env; a variable is either plain (engine.env) or secret (secretEnv), not both`,
      );
    if (DERIVED_ENV.includes(k)) issues.add(where, k, `${k} is derived per node by the planner; it cannot be a secret`);
  }
  return secretEnv;
}
