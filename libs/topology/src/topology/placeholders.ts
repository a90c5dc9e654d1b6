/** Values known only after allocation appear in plans as these named placeholders. */
export const HEAD_ADDR = '{{HEAD_ADDR}}';
export const PORT = '{{PORT}}';
export const DP_RPC_PORT = '{{DP_RPC_PORT}}';
export const MASTER_PORT = '{{MASTER_PORT}}';
/** The P/D router's port on node 0 (disaggregated orientations, rule 26). */
export const ROUTER_PORT = '{{ROUTER_PORT}}';
/** This node's own address (per-node env, VLLM_HOST_IP). */
export const NODE_ADDR = '{{NODE_ADDR}}';
/**
 * The serving port of worker g (g ≥ 1) of a disaggregated plan, `PORT` + g × WORKER_PORT_STRIDE (plan/bind.ts):
 * every worker listens on its own port, so workers sharing an address (the local stack's nodes) never clash.
 */
export const workerPortOf = (g: number): string => (g === 0 ? PORT : `{{PORT_${g}}}`);
/** Node k's address (per-node endpoints under hybrid/external LB). */
export const nodeAddrOf = (rank: number): string => `{{NODE_ADDR_${rank}}}`;

/** Any `{{NAME}}` placeholder. */
export const PLACEHOLDER_RE = /\{\{([A-Z0-9_]+)\}\}/g;

export function placeholdersIn(text: string): string[] {
  return [...text.matchAll(PLACEHOLDER_RE)].map((m) => m[1] ?? '');
}
