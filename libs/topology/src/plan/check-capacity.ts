import type { AgentxSettings } from '../config/agentx';
import type { Topology } from '../topology/validate';
import { describeCapacity, estimateCapacity, gpuMemoryBytes, judgeCapacity, replayedTraceContext } from './capacity';
import type { PlanDraft } from './draft';
import type { EngineSettings } from './engine';
import type { SweepPlan } from './schema';

export interface CapacityInput {
  topology: Topology;
  settings: EngineSettings;
  agentx: AgentxSettings;
  points: readonly number[];
}

/**
 * The plan's capacity block (capacity.ts): weights and KV cache against GPU memory, judged against
 * the real engine's context (not the simulator's). A refusal is a ConfigError unless --force, which
 * keeps it as warnings. Unchecked (with the reason) without a model architecture, a known GPU
 * memory size or a served context.
 */
export function checkCapacity(d: PlanDraft, i: CapacityInput): SweepPlan['capacity'] {
  const arch = d.config.model.architecture;
  const gpuBytes = gpuMemoryBytes(d.cluster.gpu);
  const engineContext = d.config.engine.maxModelLen ?? d.modelDefaultContext;
  if (arch === undefined) return { checked: false, reason: 'model.architecture is not set' };
  if (gpuBytes === undefined)
    return {
      checked: false,
      reason: `GPU "${d.cluster.gpu}" has no known memory size (known: H100, H200, B200, GB200, B300, GB300)`,
    };
  if (engineContext === undefined)
    return { checked: false, reason: 'no served context: set engine.maxModelLen or model.defaultContextTokens' };
  const { topology: t, settings: es, agentx } = i;
  const est = estimateCapacity({
    arch,
    gpuMemoryBytes: gpuBytes,
    tp: t.tp,
    pp: t.pp,
    dp: t.dp,
    ep: t.expertParallel ? t.ep : 1,
    gpuMemoryUtilization: es.gpuMemoryUtilization,
    maxNumSeqs: es.maxNumSeqs,
    servedContextTokens: engineContext,
    traceContextTokens: replayedTraceContext(agentx, engineContext),
    points: i.points,
  });
  const judged = judgeCapacity(est, d.oName);
  d.warnings.push(...judged.warnings);
  const forced = judged.verdict === 'refuse' && d.opts.force === true;
  if (judged.verdict === 'refuse') {
    if (forced) d.warnings.push(...judged.problems.map((p) => `capacity (forced): ${p}`));
    else
      judged.problems.forEach((p) =>
        d.issues.add(['model', 'architecture'], '(capacity check)', `${p}; or plan with --force to run it anyway`),
      );
  }
  d.issues.throwIfAny();
  return {
    checked: true,
    verdict: judged.verdict,
    forced,
    ...est,
    points: est.points.map((p) => ({ ...p, kvDemandRatio: Number.isFinite(p.kvDemandRatio) ? p.kvDemandRatio : null })),
    summary: describeCapacity(est),
  };
}
