import { compareVersions, validatedShape } from '../topology/recipes';
import type { Topology } from '../topology/validate';
import type { PlanDraft } from './draft';

/**
 * Checks against the validated recipe for this model family on this GPU (rule 18): the minimum vLLM
 * version, the KV-safe context length (when no model architecture lets the capacity check say more),
 * and DP×EP shapes nobody has validated (refused unless allowUnvalidated).
 */
export function checkRecipe(d: PlanDraft, topology: Topology): void {
  const { recipe, issues } = d;
  if (recipe === undefined) return;
  const engine = d.config.engine;
  if (compareVersions(engine.version, recipe.minVllmVersion) < 0) {
    issues.add(['engine', 'version'], engine.version, `${recipe.family} needs vLLM ≥ ${recipe.minVllmVersion}`);
  }
  const modelDefault = d.modelDefaultContext;
  if (d.config.model.architecture !== undefined) {
    // the capacity check (check-capacity.ts) says more than this rule of thumb
  } else if (engine.maxModelLen === undefined && (modelDefault ?? Infinity) > recipe.kvSafeMaxModelLen) {
    d.warnings.push(
      `engine.maxModelLen is not set: vLLM uses the model default context (${modelDefault ?? 'unknown'} tokens), more than the ${recipe.gpu} KV capacity the ${recipe.family} recipe allows (--max-model-len ${recipe.kvSafeMaxModelLen}); startup may fail the KV-capacity check. Set engine.maxModelLen: ${recipe.kvSafeMaxModelLen} (rule 18) unless the model default is intended`,
    );
  } else if (engine.maxModelLen !== undefined && engine.maxModelLen > recipe.kvSafeMaxModelLen) {
    d.warnings.push(
      `engine.maxModelLen ${engine.maxModelLen} exceeds the ${recipe.family} ${recipe.gpu} recipe's ${recipe.kvSafeMaxModelLen}; startup may fail the KV-capacity check`,
    );
  }
  if (!(topology.dp > 1 && topology.expertParallel && !recipe.dpEpValidated)) return;
  const shape = validatedShape(recipe, topology);
  if (shape !== undefined) {
    d.notes.push(
      `DP${topology.dp}×EP${topology.ep} with TP${topology.tp}/PP${topology.pp} is validated on ${recipe.gpu} by ${shape.source}`,
    );
    return;
  }
  const allowed = d.orientation.allowUnvalidated ?? engine.allowUnvalidated;
  const what = `DP${topology.dp}×EP${topology.ep} is not a validated ${recipe.family} profile on ${recipe.gpu} (${recipe.source})`;
  if (allowed) d.warnings.push(`experimental on ${recipe.gpu}: ${what}; allowed by allowUnvalidated`);
  else
    issues.add(
      [...d.tPath, 'ep'],
      d.spec.ep,
      `${what}; set orientations.${d.oName}.allowUnvalidated: true to run it anyway (rule 18)`,
    );
}
