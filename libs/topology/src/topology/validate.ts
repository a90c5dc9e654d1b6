import { z } from 'zod';
import { endpointsModeSchema, lbModeSchema, type EndpointsMode, type LbMode } from '../config/schema';

/**
 * Rules 1–5 and 13 of docs/topology-rules.md: is a logical topology a legal,
 * GPU-tiling vLLM deployment on M nodes of G GPUs? Pure; returns every violation found.
 */
export interface TopologyInput {
  tp: number;
  pp: number;
  dp: number;
  /** Optional; when given it must equal TP×DP (rule 4). Absent or 1 = no expert parallelism. */
  ep?: number | undefined;
  nodes: number;
  gpusPerNode: number;
  lbMode?: LbMode | undefined;
  endpoints?: EndpointsMode | undefined;
  moe: boolean;
}

export type TopologyField = 'tp' | 'pp' | 'dp' | 'ep' | 'nodes' | 'gpusPerNode' | 'lbMode' | 'endpoints';

export interface TopologyViolation {
  /** The rule number in docs/topology-rules.md. */
  rule: number;
  field: TopologyField;
  value: unknown;
  message: string;
}

/** A validated topology (JSON-safe; embedded in plans). */
export const topologySchema = z
  .object({
    tp: z.number().int().positive(),
    pp: z.number().int().positive(),
    dp: z.number().int().positive(),
    /** Effective EP size: TP×DP when expert parallelism is on, else 1. */
    ep: z.number().int().positive(),
    expertParallel: z.boolean(),
    nodes: z.number().int().positive(),
    gpusPerNode: z.number().int().positive(),
    gpus: z.number().int().positive(),
    /** R = TP×PP, GPUs per replica. */
    gpusPerReplica: z.number().int().positive(),
    /** `within-node`: R ≤ G; `spans-nodes`: one replica covers R/G nodes. */
    replica: z.enum(['within-node', 'spans-nodes']),
    /** DP engines per node (within-node), or null when a replica spans nodes. */
    dpLocal: z.number().int().positive().nullable(),
    nodesPerReplica: z.number().int().positive(),
    lbMode: lbModeSchema,
    endpoints: endpointsModeSchema,
    /** Reasons vLLM supports this layout by design but it is not verified. */
    experimental: z.array(z.string()),
    warnings: z.array(z.string()),
  })
  .strict();
export type Topology = z.infer<typeof topologySchema>;

export type TopologyResult = { ok: true; topology: Topology } | { ok: false; violations: TopologyViolation[] };

const isPosInt = (n: unknown): n is number => typeof n === 'number' && Number.isInteger(n) && n >= 1;

/** The sizes, after rule 1 holds. */
type Sizes = Required<Pick<TopologyInput, 'tp' | 'pp' | 'dp' | 'nodes' | 'gpusPerNode'>> &
  Pick<TopologyInput, 'ep' | 'moe'>;

/** How a replica sits on the nodes (rule 3), with what rule 3 notices but allows. */
type ReplicaLayout = Pick<Topology, 'replica' | 'dpLocal' | 'nodesPerReplica' | 'warnings' | 'experimental'>;

/**
 * Rules 1–5 and 13 of docs/topology-rules.md, in order; every violation found is returned. Sizes
 * that are not positive integers (rule 1) stop the check: the other rules compute with them.
 */
export function checkTopology(input: TopologyInput): TopologyResult {
  const v = checkSizes(input);
  if (v.length > 0) return { ok: false, violations: v };
  const { tp, pp, dp, nodes, gpusPerNode } = input;
  const lbMode: LbMode = input.lbMode ?? 'internal';
  checkTiling(input, v);
  const layout = classifyReplica(input, v);
  const expertParallel = checkExpertParallel(input, v);
  const endpoints: EndpointsMode = input.endpoints ?? (lbMode === 'internal' ? 'single' : 'per-node');
  checkLoadBalancing(input, lbMode, endpoints, layout, v);
  if (v.length > 0) return { ok: false, violations: v };
  return {
    ok: true,
    topology: {
      tp,
      pp,
      dp,
      ep: expertParallel ? tp * dp : 1,
      expertParallel,
      nodes,
      gpusPerNode,
      gpus: tp * pp * dp,
      gpusPerReplica: tp * pp,
      replica: layout.replica,
      dpLocal: layout.dpLocal,
      nodesPerReplica: layout.nodesPerReplica,
      lbMode,
      endpoints,
      experimental: layout.experimental,
      warnings: layout.warnings,
    },
  };
}

/** Rule 1: sizes are positive integers. */
function checkSizes(input: TopologyInput): TopologyViolation[] {
  const v: TopologyViolation[] = [];
  for (const field of ['tp', 'pp', 'dp', 'nodes', 'gpusPerNode'] as const) {
    const value = input[field];
    if (!isPosInt(value)) v.push({ rule: 1, field, value, message: `${field} must be a positive integer` });
  }
  if (input.ep !== undefined && !isPosInt(input.ep)) {
    v.push({ rule: 1, field: 'ep', value: input.ep, message: 'ep must be a positive integer (or omitted)' });
  }
  return v;
}

/** Rule 2: use every GPU. */
function checkTiling({ tp, pp, dp, nodes: M, gpusPerNode: G }: Sizes, v: TopologyViolation[]): void {
  const gpus = tp * pp * dp;
  if (gpus === M * G) return;
  const tiling = gpus % G === 0 ? `use nodes: ${gpus / G}` : `TP×PP×DP must be a multiple of ${G}`;
  v.push({
    rule: 2,
    field: 'nodes',
    value: M,
    message: `topology uses ${gpus} GPUs but allocation has ${M * G} (TP${tp}×PP${pp}×DP${dp} vs ${M} nodes × ${G} GPUs); ${tiling}`,
  });
}

/** Rule 3: classify the replica (R = TP×PP GPUs) as within a node or spanning nodes. */
function classifyReplica(s: Sizes, v: TopologyViolation[]): ReplicaLayout {
  const { tp, pp, dp, nodes: M, gpusPerNode: G } = s;
  const R = tp * pp;
  const layout: ReplicaLayout = {
    replica: 'within-node',
    dpLocal: null,
    nodesPerReplica: 1,
    warnings: [],
    experimental: [],
  };
  if (R <= G) {
    if (G % R !== 0) {
      v.push({
        rule: 3,
        field: 'tp',
        value: tp,
        message: `a replica of TP×PP = ${R} GPUs does not tile a node of ${G} GPUs (${G} % ${R} ≠ 0)`,
      });
      return layout;
    }
    layout.dpLocal = G / R;
    if (dp !== M * layout.dpLocal) {
      v.push({
        rule: 3,
        field: 'dp',
        value: dp,
        message: `with ${layout.dpLocal} replica(s) of ${R} GPUs per node, ${M} nodes hold DP = ${M * layout.dpLocal}`,
      });
    }
    return layout;
  }
  layout.replica = 'spans-nodes';
  if (R % G !== 0) {
    v.push({
      rule: 3,
      field: 'tp',
      value: tp,
      message: `a replica of TP×PP = ${R} GPUs spans nodes but is not a whole number of ${G}-GPU nodes`,
    });
    return layout;
  }
  layout.nodesPerReplica = R / G;
  checkSpanningReplica(s, layout, v);
  return layout;
}

/** Rule 3 for a replica of whole nodes: DP of them fill the allocation, and TP does not straddle a node. */
function checkSpanningReplica(
  { tp, dp, nodes: M, gpusPerNode: G }: Sizes,
  layout: ReplicaLayout,
  v: TopologyViolation[],
): void {
  const { nodesPerReplica } = layout;
  if (dp * nodesPerReplica !== M) {
    v.push({
      rule: 3,
      field: 'nodes',
      value: M,
      message: `DP${dp} replicas of ${nodesPerReplica} node(s) each need ${dp * nodesPerReplica} nodes`,
    });
  }
  if (tp <= G && G % tp !== 0) {
    v.push({
      rule: 3,
      field: 'tp',
      value: tp,
      message: `TP${tp} must divide the ${G} GPUs of a node so TP does not cross nodes`,
    });
  } else if (tp > G) {
    if (tp % G !== 0) {
      v.push({ rule: 3, field: 'tp', value: tp, message: `TP${tp} crosses nodes and must be a multiple of ${G}` });
    } else {
      layout.warnings.push(
        `TP crosses nodes (TP${tp} > ${G} GPUs per node): tensor-parallel traffic goes over the network`,
      );
    }
  }
  if (dp > 1) {
    layout.experimental.push(
      `replica spans ${nodesPerReplica} nodes with DP${dp}: the --nnodes form with DP>1 is supported by design (vLLM PR #23691) but unverified (rule 12)`,
    );
  }
}

/** Rules 4–5: EP is derived (TP×DP) and needs an MoE model; true when expert parallelism is on. */
function checkExpertParallel({ tp, dp, ep, moe }: Sizes, v: TopologyViolation[]): boolean {
  if (ep === undefined) return false;
  if (ep !== tp * dp) {
    v.push({
      rule: 4,
      field: 'ep',
      value: ep,
      message: `vLLM's EP size is TP×DP per PP stage = ${tp * dp} (got EP=${ep}, TP×DP=${tp}×${dp}); set ep: ${tp * dp} or omit it to disable expert parallelism`,
    });
    return false;
  }
  if (ep <= 1) return false;
  if (!moe)
    v.push({
      rule: 5,
      field: 'ep',
      value: ep,
      message: 'expert parallelism needs an MoE model (model.moe is false); omit ep',
    });
  return true;
}

/** Rule 13: LB modes are opt-in and need a matching endpoint list. */
function checkLoadBalancing(
  { dp, nodes: M, gpusPerNode: G }: Sizes,
  lbMode: LbMode,
  endpoints: EndpointsMode,
  layout: ReplicaLayout,
  v: TopologyViolation[],
): void {
  if (lbMode === 'internal') {
    if (endpoints === 'per-node' && M > 1) {
      v.push({
        rule: 13,
        field: 'endpoints',
        value: endpoints,
        message: 'internal LB has one API server (node 0); headless nodes expose no HTTP. Use endpoints: single',
      });
    }
    return;
  }
  const lb = (message: string): void => void v.push({ rule: 13, field: 'lbMode', value: lbMode, message });
  if (dp < 2) lb(`${lbMode} LB needs DP > 1 (got DP${dp}); use lbMode: internal`);
  const { dpLocal } = layout;
  if (layout.replica === 'spans-nodes') {
    lb(`${lbMode} LB is only supported when a replica fits in a node (TP×PP ≤ ${G}); use lbMode: internal`);
  } else if (dpLocal !== null && dp >= 2) {
    if (lbMode === 'hybrid' && !(dpLocal >= 2 && dpLocal < dp))
      lb(
        `hybrid LB needs 2 ≤ DP-local < DP (DP-local = ${dpLocal}, DP = ${dp}); vLLM would silently switch modes. Use lbMode: ${dpLocal === 1 ? 'external' : 'internal'}`,
      );
    if (lbMode === 'external' && dpLocal !== 1)
      lb(
        `external LB runs one server per DP rank and needs DP-local = 1 (got ${dpLocal}); use lbMode: internal or hybrid`,
      );
  }
  if (endpoints === 'single') {
    v.push({
      rule: 13,
      field: 'endpoints',
      value: endpoints,
      message: `${lbMode} LB serves each node's ranks from that node's own API server: a single endpoint leaves the other nodes' ranks idle (the bash runner's hybrid-LB bug). Use endpoints: per-node, or lbMode: internal`,
    });
  }
}

/** Nodes needed for TP×PP×DP on G-GPU nodes, or null when it does not tile. */
export function deriveNodes(tp: number, pp: number, dp: number, gpusPerNode: number): number | null {
  const gpus = tp * pp * dp;
  return gpus % gpusPerNode === 0 && gpus > 0 ? gpus / gpusPerNode : null;
}
