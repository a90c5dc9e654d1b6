/**
 * What model recipes say about a model family on a GPU model (vllm-project/recipes), used for
 * warnings and the allowUnvalidated gate (rule 18). Data, not logic: add rows as recipes change.
 */
export interface RecipeConstraint {
  family: string;
  gpu: string;
  /** Lowest vLLM version the model runs on. */
  minVllmVersion: string;
  /** Largest --max-model-len the recipe's hardware profile uses (KV capacity). */
  kvSafeMaxModelLen: number;
  /** Context the model advertises (vLLM's default without --max-model-len). */
  modelDefaultContext: number;
  /** Does the recipe validate DP×EP (multi_node_dep) on this GPU? */
  dpEpValidated: boolean;
  source: string;
  /** DP×EP shapes validated elsewhere (InferenceX's recipes) even though the vLLM recipe marks DP×EP unsupported. */
  validatedShapes?: readonly { tp: number; pp: number; dp: number; source: string }[];
}

export const RECIPE_CONSTRAINTS: readonly RecipeConstraint[] = [
  {
    family: 'kimi-k3',
    gpu: 'H200',
    minVllmVersion: '0.27.1',
    kvSafeMaxModelLen: 32768,
    modelDefaultContext: 1048576,
    dpEpValidated: false,
    source: 'vllm-project/recipes models/moonshotai/Kimi-K3.yaml (Hopper override; multi_node_dep: h200 unsupported)',
    validatedShapes: [
      { tp: 16, pp: 1, dp: 2, source: 'InferenceX agg-h200-tp16dp2ep32-latency-agentic.yaml (4×8 H200, EP32)' },
      { tp: 8, pp: 1, dp: 4, source: 'InferenceX agg-h200-tp8dp4ep32-balanced-agentic.yaml (4×8 H200, EP32)' },
    ],
  },
];

export function recipeFor(family: string | undefined, gpu: string): RecipeConstraint | undefined {
  if (family === undefined) return undefined;
  return RECIPE_CONSTRAINTS.find(
    (r) => r.family.toLowerCase() === family.toLowerCase() && r.gpu.toLowerCase() === gpu.toLowerCase(),
  );
}

/** Compare dotted numeric versions (`0.27.1` vs `0.28`); non-numeric suffixes are ignored. */
/** The validated shape matching a topology, if the recipe lists one. */
export function validatedShape(
  r: RecipeConstraint,
  t: { tp: number; pp: number; dp: number },
): { source: string } | undefined {
  return r.validatedShapes?.find((v) => v.tp === t.tp && v.pp === t.pp && v.dp === t.dp);
}

export function compareVersions(a: string, b: string): number {
  const pa = a.split(/[.+-]/).map((x) => parseInt(x, 10));
  const pb = b.split(/[.+-]/).map((x) => parseInt(x, 10));
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = Number.isNaN(pa[i] ?? 0) ? 0 : (pa[i] ?? 0);
    const y = Number.isNaN(pb[i] ?? 0) ? 0 : (pb[i] ?? 0);
    if (x !== y) return x - y;
  }
  return 0;
}
