import { all2allBackends } from '../config/schema';
import type { PathSegment } from '../config/parse';
import { checkCommonArgs } from '../topology/commands';
import type { Topology } from '../topology/validate';
import type { PlanDraft } from './draft';

/** engine.env names vLLM no longer reads, with the fix. */
const REMOVED_ENV: Readonly<Record<string, string>> = {
  VLLM_RPC_TIMEOUT: 'removed from vLLM (PR #44128); delete it',
  VLLM_ALL2ALL_BACKEND: 'removed from vLLM; set engine.all2allBackend instead',
};

/**
 * Engine checks (rules 7, 8, 15, 18): the common and extra args, removed environment variables,
 * the all-to-all backend, EPLB without expert parallelism, the Rust frontend.
 */
export function checkEngine(d: PlanDraft, topology: Topology): void {
  const { issues, oPath, oName } = d;
  const engine = d.config.engine;
  checkCommonArgs(engine.commonArgs).forEach((p) => issues.add(['engine', 'commonArgs', p.index], p.arg, p.message));
  checkCommonArgs(d.orientation.engine?.extraArgs ?? []).forEach((p) =>
    issues.add([...oPath, 'engine', 'extraArgs', p.index], p.arg, p.message),
  );
  const envSources: [PathSegment[], Record<string, string>][] = [
    [['engine', 'env'], engine.env],
    [[...oPath, 'engine', 'env'], d.orientation.engine?.env ?? {}],
  ];
  for (const [where, env] of envSources)
    for (const [removed, fix] of Object.entries(REMOVED_ENV))
      if (env[removed] !== undefined) issues.add([...where, removed], env[removed], fix);
  const backend = engine.all2allBackend;
  if (backend === 'pplx' || backend === 'naive') {
    issues.add(
      ['engine', 'all2allBackend'],
      backend,
      `removed from vLLM (falls back silently); allowed: ${all2allBackends.join(', ')}`,
    );
  } else if (backend !== undefined && !(all2allBackends as readonly string[]).includes(backend)) {
    issues.add(['engine', 'all2allBackend'], backend, `allowed: ${all2allBackends.join(', ')}`);
  } else if (backend !== undefined && !topology.expertParallel) {
    d.warnings.push(
      `engine.all2allBackend ${backend} is not emitted: orientation ${oName} has no expert parallelism (rule 8)`,
    );
  }
  if (engine.eplb !== undefined && !topology.expertParallel) {
    issues.add(
      ['engine', 'eplb'],
      engine.eplb,
      `EPLB needs expert parallelism (EP > 1) but orientation ${oName} has EP ${topology.ep}; remove engine.eplb or set topology.ep (rule 7)`,
    );
  }
  if (engine.env.VLLM_USE_RUST_FRONTEND === '1') {
    d.warnings.push(
      'VLLM_USE_RUST_FRONTEND=1: /metrics parity of per-engine labels is unverified; readiness and idle-rank checks may fail (rule 18)',
    );
  }
}
