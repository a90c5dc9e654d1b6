import { z } from 'zod';

/**
 * The `disaggregated:` block of an orientation (rules 23–28 of docs/topology-rules.md): a prefill
 * group and a decode group of vLLM workers (xPyD), the KV-transfer connector between them and the
 * router in front. Each worker of a role is a whole vLLM deployment with the role's topology
 * (rules 1–22 hold for it as for an aggregated orientation).
 */
const posInt = z.number().int().positive();
const nonEmpty = z.string().trim().min(1, 'must not be empty');
const port = z.number().int().min(1024).max(65535);

/** One role: `workers` identical vLLM deployments (x of xPyD), each with this topology. */
export function roleSchema<T extends z.ZodTypeAny, E extends z.ZodTypeAny>(topology: T, engine: E) {
  return z
    .object({
      /** How many independent deployments of this role (the x of xPyD for prefill, the y for decode). */
      workers: posInt.default(1),
      /** One worker's topology (TP/PP/DP/EP; its nodes are derived from the cluster's GPUs per node). */
      topology,
      /** This role's engine settings over the orientation's (e.g. a larger max-num-batched-tokens for prefill). */
      engine: engine.optional(),
    })
    .strict();
}

/**
 * vLLM's NixlConnector (vLLM docs/features/nixl_connector_usage.md): every worker gets
 * `--kv-transfer-config {"kv_connector":"NixlConnector","kv_role":…,"kv_load_failure_policy":…}`
 * and the side channel env `VLLM_NIXL_SIDE_CHANNEL_HOST` (its own address) and `VLLM_NIXL_SIDE_CHANNEL_PORT`
 * (a base; vLLM adds the local DP rank).
 */
export const nixlConnectorSchema = z
  .object({
    kind: z.literal('NixlConnector'),
    /** `kv_connector_extra_config.backends` (NIXL transport plugins); unset: NIXL's default (UCX). */
    backends: z.array(nonEmpty).min(1).optional(),
    /** `VLLM_NIXL_SIDE_CHANNEL_PORT` base on every node (vLLM's default 5600; + local DP rank per worker). */
    sideChannelPort: port.default(5600),
    /** `kv_load_failure_policy`: `fail` (vLLM's default) or `recompute` (the decoder prefills: a silent slow path). */
    loadFailurePolicy: z.enum(['fail', 'recompute']).default('fail'),
    /** `kv_connector_extra_config.kv_lease_duration`, seconds (vLLM default 30). */
    leaseSeconds: posInt.optional(),
    /** `UCX_NET_DEVICES` on every node (e.g. `mlx5_0:1,mlx5_1:1`); NCCL's interface variables do not apply to UCX. */
    ucxNetDevices: nonEmpty.optional(),
  })
  .strict();

/**
 * vLLM's P2pNcclConnector (vLLM docs/design/p2p_nccl_connector.md): producers and consumers register
 * with a discovery proxy (`proxy_ip`, `proxy_port`), `http_port` equals the worker's `--port`, and each
 * instance listens on `kv_port` for its NCCL handshakes. Symmetric TP only; no PP.
 */
export const p2pNcclConnectorSchema = z
  .object({
    kind: z.literal('P2pNcclConnector'),
    /** `send_type`: PUT_ASYNC is the documented fastest. */
    sendType: z.enum(['PUT', 'GET', 'PUT_ASYNC']).default('PUT_ASYNC'),
    /** `kv_port` of every worker. */
    kvPort: port.default(21001),
    /** The router's discovery port (`proxy_port`; vllm-router `--vllm-discovery-address`). */
    discoveryPort: port.default(30001),
    /** `kv_buffer_size` in bytes per role (the docs: 1e1 for producers without GET, 5–10 % of GPU memory for consumers). */
    prefillBufferBytes: z.number().positive().default(1e1),
    decodeBufferBytes: z.number().positive().default(8e9),
  })
  .strict();

export const kvConnectorSchema = z.discriminatedUnion('kind', [nixlConnectorSchema, p2pNcclConnectorSchema]);

/**
 * The router clients talk to. `vllm-router` (vllm-project/router docs/model-routing/pd-disaggregation.md:
 * `--vllm-pd-disaggregation --prefill URL… --decode URL…`); `toy-proxy` (vLLM
 * tests/v1/kv_connector/nixl_integration/toy_proxy_server.py, the proxy vLLM's NixlConnector guide uses);
 * `llm-d-pd-sidecar` (llm-d's `pd-sidecar`, cmd/pd-sidecar of github.com/llm-d/llm-d-inference-scheduler,
 * installed by scripts/setup-pd-router.sh): it runs on the decode worker's head node in front of it, sends each
 * request's prefill to the prefiller named by the request's `x-prefiller-host-port` header itself, then the
 * request to its decode worker (pkg/sidecar/proxy/chat_completions.go, connector_nixlv2.go). In llm-d the
 * scheduler sets that header; here the client sends it (the plan's `requestHeaders`, every prefill worker,
 * the sidecar picking one at random with `--enable-prefiller-sampling`).
 */
export const routerSchema = z
  .object({
    kind: z.enum(['vllm-router', 'toy-proxy', 'llm-d-pd-sidecar']).default('vllm-router'),
    /** The executable (vllm-router, pd-sidecar) or the script (toy-proxy, run with python3). */
    binary: nonEmpty.optional(),
    /** The router's version, exported as InferenceX's `router: {name, version}` (omitted when unset). */
    version: nonEmpty.optional(),
    prefillPolicy: nonEmpty.default('consistent_hash'),
    decodePolicy: nonEmpty.default('power_of_two'),
    extraArgs: z.array(nonEmpty).default([]),
  })
  .strict();

export type KvConnector = z.infer<typeof kvConnectorSchema>;
export type RouterSpec = z.infer<typeof routerSchema>;
export const DISAGG_ROLES = ['prefill', 'decode'] as const;
export type DisaggRole = (typeof DISAGG_ROLES)[number];
