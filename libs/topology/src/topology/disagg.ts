import { DISAGG_ROLES, type DisaggRole, type KvConnector, type RouterSpec } from '../config/disagg';
import type { Topology } from './validate';
import { HEAD_ADDR, NODE_ADDR, PORT, ROUTER_PORT, nodeAddrOf, workerPortOf } from './placeholders';

/**
 * Rules 24–26 of docs/topology-rules.md (pure): the KV-transfer connector's flag and environment per
 * role, the P/D compatibility rules vLLM's handshake and connectors impose, and the router's argv.
 */

/** `kv_role` per role: the producer/consumer split of vLLM's multi-instance examples (NixlConnector guide, P2P NCCL design). */
export const KV_ROLE: Readonly<Record<DisaggRole, string>> = { prefill: 'kv_producer', decode: 'kv_consumer' };

/** The `--kv-transfer-config` JSON of one role (identical on every node of every worker of the role: rule 9). */
export function kvTransferConfig(c: KvConnector, role: DisaggRole): string {
  if (c.kind === 'NixlConnector') {
    const extra: Record<string, unknown> = {};
    if (c.backends !== undefined) extra.backends = c.backends;
    if (c.leaseSeconds !== undefined) extra.kv_lease_duration = c.leaseSeconds;
    return JSON.stringify({
      kv_connector: 'NixlConnector',
      kv_role: KV_ROLE[role],
      kv_load_failure_policy: c.loadFailurePolicy,
      ...(Object.keys(extra).length > 0 ? { kv_connector_extra_config: extra } : {}),
    });
  }
  return JSON.stringify({
    kv_connector: 'P2pNcclConnector',
    kv_role: KV_ROLE[role],
    kv_buffer_size: String(role === 'prefill' ? c.prefillBufferBytes : c.decodeBufferBytes),
    kv_port: String(c.kvPort),
    kv_connector_extra_config: {
      proxy_ip: HEAD_ADDR,
      proxy_port: String(c.discoveryPort),
      // the docs: http_port must equal the worker's --port
      http_port: PORT,
      send_type: c.sendType,
    },
  });
}

/** Environment the connector adds on every node (NixlConnector: its side channel; the host is the node's own address). */
export function connectorEnv(c: KvConnector): Record<string, string> {
  if (c.kind !== 'NixlConnector') return {};
  return {
    VLLM_NIXL_SIDE_CHANNEL_HOST: NODE_ADDR,
    VLLM_NIXL_SIDE_CHANNEL_PORT: String(c.sideChannelPort),
    ...(c.ucxNetDevices === undefined ? {} : { UCX_NET_DEVICES: c.ucxNetDevices }),
  };
}

export interface DisaggViolation {
  rule: number;
  /** Config path below `orientations.<name>.disaggregated` (e.g. `['decode', 'topology', 'tp']`). */
  path: (string | number)[];
  value: unknown;
  message: string;
}

export interface RoleView {
  topology: Pick<Topology, 'tp' | 'pp'>;
  /** The role's number of workers (default 1). */
  workers?: number;
  /** The role's engine extra args (orientation's, then the role's own). */
  extraArgs: readonly string[];
}

/** The value of `--flag v` or `--flag=v` in argv (last wins, as argparse does). */
export function argValue(argv: readonly string[], flag: string): string | undefined {
  let v: string | undefined;
  argv.forEach((a, i) => {
    if (a === flag) v = argv[i + 1];
    else if (a.startsWith(`${flag}=`)) v = a.slice(flag.length + 1);
  });
  return v;
}

/** Fields of `--speculative-config` that must match between P and D (NixlConnector compatibility matrix, note 1). */
const SPEC_MUST_MATCH = ['method', 'model', 'revision', 'draft_tensor_parallel_size', 'parallel_drafting'] as const;

function parseSpec(raw: string | undefined): Record<string, unknown> | null | undefined {
  if (raw === undefined) return undefined;
  try {
    const v: unknown = JSON.parse(raw);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * Rules 24 and 25: what the connector supports and what vLLM's P/D handshake requires of both roles.
 * `hybrid`: the model has linear-attention (SSM/KDA) layers, which the NixlConnector transfers only
 * between equal TP sizes (vLLM docs/features/nixl_connector_compatibility.md, note 5).
 */
export function checkDisaggRoles(
  c: KvConnector,
  router: RouterSpec,
  roles: Readonly<Record<DisaggRole, RoleView>>,
  hybrid: boolean,
): DisaggViolation[] {
  return [...checkConnector(c, router, roles, hybrid), ...checkHandshake(roles, hybrid)];
}

/** Rule 24 (and the router P2pNcclConnector needs, rule 26). */
function checkConnector(
  c: KvConnector,
  router: RouterSpec,
  roles: Readonly<Record<DisaggRole, RoleView>>,
  hybrid: boolean,
): DisaggViolation[] {
  const v: DisaggViolation[] = [];
  if (router.kind === 'llm-d-pd-sidecar') v.push(...checkSidecar(c, roles));
  const p = roles.prefill.topology;
  const d = roles.decode.topology;
  if (c.kind === 'NixlConnector') {
    if (hybrid && p.tp !== d.tp)
      v.push({
        rule: 24,
        path: ['decode', 'topology', 'tp'],
        value: d.tp,
        message: `the model has linear-attention (hybrid) layers: NixlConnector needs the same TP on prefill and decode (prefill TP${p.tp}); heterogeneous TP is not supported for them`,
      });
    return v;
  }
  if (p.tp !== d.tp)
    v.push({
      rule: 24,
      path: ['decode', 'topology', 'tp'],
      value: d.tp,
      message: `P2pNcclConnector supports symmetric TP only (prefill TP${p.tp}); use the same TP or NixlConnector`,
    });
  for (const role of DISAGG_ROLES)
    if (roles[role].topology.pp !== 1)
      v.push({
        rule: 24,
        path: [role, 'topology', 'pp'],
        value: roles[role].topology.pp,
        message: 'P2pNcclConnector does not support pipeline parallelism; use pp: 1 or NixlConnector',
      });
  if (router.kind !== 'vllm-router')
    v.push({
      rule: 26,
      path: ['router', 'kind'],
      value: router.kind,
      message:
        'P2pNcclConnector workers register with a discovery proxy: use router kind vllm-router (--vllm-discovery-address)',
    });
  return v;
}

/**
 * Rule 26 for llm-d's pd-sidecar: it fronts one decode worker (its decoder is `localhost:--vllm-port`,
 * pkg/sidecar/proxy/options.go) and speaks the NIXL v2 protocol (`kv_transfer_params`, connector_nixlv2.go).
 */
function checkSidecar(c: KvConnector, roles: Readonly<Record<DisaggRole, RoleView>>): DisaggViolation[] {
  const v: DisaggViolation[] = [];
  if (c.kind !== 'NixlConnector')
    v.push({
      rule: 26,
      path: ['connector', 'kind'],
      value: c.kind,
      message: "router llm-d-pd-sidecar speaks NixlConnector's kv_transfer_params protocol (nixlv2): use NixlConnector",
    });
  if ((roles.decode.workers ?? 1) !== 1)
    v.push({
      rule: 26,
      path: ['decode', 'workers'],
      value: roles.decode.workers,
      message:
        "router llm-d-pd-sidecar fronts one decode worker (llm-d's scheduler picks among several): use decode workers: 1 or router vllm-router",
    });
  return v;
}

/** Rule 25: what vLLM's P/D handshake compares must be equal on both roles. */
function checkHandshake(roles: Readonly<Record<DisaggRole, RoleView>>, hybrid: boolean): DisaggViolation[] {
  const v: DisaggViolation[] = [];
  const p = roles.prefill.extraArgs;
  const d = roles.decode.extraArgs;
  for (const flag of ['--kv-cache-dtype', '--attention-backend', ...(hybrid ? ['--block-size'] : [])]) {
    const pv = argValue(p, flag);
    const dv = argValue(d, flag);
    if (pv !== dv)
      v.push({
        rule: 25,
        path: ['decode', 'engine', 'extraArgs'],
        value: `${flag} ${dv ?? '(unset)'}`,
        message: `${flag} must be equal on prefill (${pv ?? 'unset'}) and decode: vLLM's P/D handshake compares it`,
      });
  }
  return [
    ...v,
    ...checkSpeculative(parseSpec(argValue(p, '--speculative-config')), parseSpec(argValue(d, '--speculative-config'))),
  ];
}

type Spec = Record<string, unknown> | null | undefined;

/** Rule 25 for `--speculative-config`: both roles or neither, the same method and draft. */
function checkSpeculative(ps: Spec, ds: Spec): DisaggViolation[] {
  if (ps === null || ds === null)
    return [
      {
        rule: 25,
        path: [ps === null ? 'prefill' : 'decode', 'engine', 'extraArgs'],
        value: '--speculative-config',
        message: '--speculative-config must be a JSON object',
      },
    ];
  if ((ps === undefined) !== (ds === undefined))
    return [
      {
        rule: 25,
        path: [ps === undefined ? 'prefill' : 'decode', 'engine', 'extraArgs'],
        value: '--speculative-config',
        message:
          'speculative decoding on one role only: vLLM requires the same speculative method and draft model on prefill and decode (the number of speculative tokens may differ)',
      },
    ];
  if (ps === undefined || ds === undefined) return [];
  return SPEC_MUST_MATCH.filter((k) => JSON.stringify(ps[k]) !== JSON.stringify(ds[k])).map((k) => ({
    rule: 25,
    path: ['decode', 'engine', 'extraArgs'],
    value: `--speculative-config ${k}`,
    message: `speculative ${k} differs (prefill ${JSON.stringify(ps[k])}, decode ${JSON.stringify(ds[k])}): vLLM's P/D handshake requires it equal`,
  }));
}

/** The serving endpoint of worker `g` (prefill workers first) whose head is global node `head`, as the router reaches it (rule 26). */
export const workerEndpoint = (head: number, g = 0): string => `http://${nodeAddrOf(head)}:${workerPortOf(g)}`;

/** The prefiller header's value: every prefill worker as `host:port` (llm-d's `x-prefiller-host-port`). */
const hostPortOf = (url: string): string => url.replace(/^https?:\/\//, '');

/** llm-d's pd-sidecar when the router names no binary (on the nodes' PATH; scripts/setup-pd-router.sh builds it). */
export const SIDECAR_BINARY = 'pd-sidecar';

/**
 * llm-d's pd-sidecar on the decode worker's head node (rule 26; flags of llm-d-inference-scheduler
 * pkg/sidecar/proxy/options.go): it listens on the router port, fronts the decode worker at `localhost:<its
 * port>` and, for a request carrying `x-prefiller-host-port`, sends the prefill there itself. Plain HTTP
 * (`--secure-proxy=false`; the default serves TLS with a self-signed certificate).
 */
export function sidecarRouter(
  r: RouterSpec,
  endpoints: Readonly<Record<DisaggRole, readonly string[]>>,
  decode: { head: number; port: string },
): { argv: string[]; env: Record<string, string>; endpoint: string; requestHeaders: Record<string, string> } {
  const argv = [
    r.binary ?? SIDECAR_BINARY,
    '--port',
    ROUTER_PORT,
    '--vllm-port',
    decode.port,
    '--kv-connector',
    'nixlv2',
    '--secure-proxy=false',
    ...(endpoints.prefill.length > 1 ? ['--enable-prefiller-sampling'] : []),
    ...r.extraArgs,
  ];
  return {
    argv,
    // no trace is sampled, so none is exported to the OTLP collector it assumes at localhost:4317
    // (pkg/telemetry/tracing.go: the sampling ratio; tracing has no off switch)
    env: { OTEL_TRACES_SAMPLER_ARG: '0' },
    endpoint: `http://${nodeAddrOf(decode.head)}:${ROUTER_PORT}`,
    requestHeaders: { 'x-prefiller-host-port': endpoints.prefill.map(hostPortOf).join(',') },
  };
}

/** The client's one endpoint: the router on node 0. */
export const ROUTER_ENDPOINT = `http://${HEAD_ADDR}:${ROUTER_PORT}`;

/** Rule 26: the router's argv, listing every prefill and decode worker endpoint. */
export function routerArgv(
  r: RouterSpec,
  c: KvConnector,
  endpoints: Readonly<Record<DisaggRole, readonly string[]>>,
): string[] {
  if (r.kind === 'toy-proxy') {
    const hostPort = (urls: readonly string[]) => {
      const parts = urls.map((u) => /^http:\/\/(.+):([^:]+)$/.exec(u) ?? ['', u, '']);
      return { hosts: parts.map((m) => m[1] ?? ''), ports: parts.map((m) => m[2] ?? '') };
    };
    const pf = hostPort(endpoints.prefill);
    const dc = hostPort(endpoints.decode);
    return [
      'python3',
      r.binary ?? 'toy_proxy_server.py',
      '--host',
      '0.0.0.0',
      '--port',
      ROUTER_PORT,
      '--prefiller-hosts',
      ...pf.hosts,
      '--prefiller-ports',
      ...pf.ports,
      '--decoder-hosts',
      ...dc.hosts,
      '--decoder-ports',
      ...dc.ports,
      ...r.extraArgs,
    ];
  }
  const workers =
    c.kind === 'P2pNcclConnector'
      ? ['--vllm-discovery-address', `0.0.0.0:${c.discoveryPort}`]
      : [...endpoints.prefill.flatMap((u) => ['--prefill', u]), ...endpoints.decode.flatMap((u) => ['--decode', u])];
  return [
    r.binary ?? 'vllm-router',
    '--vllm-pd-disaggregation',
    ...workers,
    '--prefill-policy',
    r.prefillPolicy,
    '--decode-policy',
    r.decodePolicy,
    '--host',
    '0.0.0.0',
    '--port',
    ROUTER_PORT,
    ...r.extraArgs,
  ];
}
