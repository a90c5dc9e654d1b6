import { argValue } from '../topology/disagg';
import type { PlanNode, Speculative } from './schema';

/**
 * The deployment's speculative decoding (pure), read from the `--speculative-config` its nodes run (the
 * InferenceX recipes put the whole setting there: the K3 H200 arms run
 * `{"method":"dspark","model":"Inferact/Kimi-K3-DSpark","num_speculative_tokens":2,…,"synthetic_acceptance_length":2.51}`,
 * configs/kimik3-fp4-h200.yaml). The expected acceptance length is the recipe's `synthetic_acceptance_length`
 * (the engine then accepts to that target); a point far from it gets a warning (libs/agentx/src/server/spec-decode.ts).
 * Undefined without speculative decoding or when the flag is not a JSON object with a method.
 */
export function speculativeOf(nodes: readonly PlanNode[]): Speculative | undefined {
  const raw = nodes[0] === undefined ? undefined : argValue(nodes[0].argv, '--speculative-config');
  if (raw === undefined) return undefined;
  let cfg: unknown;
  try {
    cfg = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (cfg === null || typeof cfg !== 'object' || Array.isArray(cfg)) return undefined;
  const c = cfg as Record<string, unknown>;
  if (typeof c.method !== 'string' || c.method === '') return undefined;
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : undefined);
  const tokens = num(c.num_speculative_tokens);
  const expected = num(c.synthetic_acceptance_length);
  return {
    method: c.method,
    ...(typeof c.model === 'string' && c.model !== '' ? { model: c.model } : {}),
    ...(tokens === undefined ? {} : { numSpeculativeTokens: tokens }),
    ...(expected === undefined ? {} : { expectedAcceptanceLength: expected }),
    config: c,
  };
}
