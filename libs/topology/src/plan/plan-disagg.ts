import { contentHash } from '@infersweep/core';
import { DISAGG_ROLES, type DisaggRole } from '../config/disagg';
import { ConfigError, showValue, type ConfigIssue } from '../config/errors';
import { dotted, lineOf } from '../config/parse';
import type { Disaggregated, Orientation, OrientationEngine, SweepConfig } from '../config/schema';
import {
  checkDisaggRoles,
  connectorEnv,
  kvTransferConfig,
  ROUTER_ENDPOINT,
  routerArgv,
  sidecarRouter,
  workerEndpoint,
} from '../topology/disagg';
import { ENTRYPOINT } from '../topology/commands';
import { HEAD_ADDR, PORT, nodeAddrOf, workerPortOf } from '../topology/placeholders';
import type { Topology } from '../topology/validate';
import { placeholdersUsed } from './assemble-plan';
import type { PlanOptions } from './draft';
import { sweepPlanSchema, type DisaggRolePlan, type PlanNode, type SweepPlan } from './schema';

type DisaggRouterPlan = NonNullable<SweepPlan['disaggregation']>['router'];

/**
 * Plan a disaggregated (prefill/decode) orientation (rules 23–28 of docs/topology-rules.md). Each role
 * is planned as an aggregated orientation of its worker topology by `planRole` (the whole aggregated
 * pipeline: rules 1–22, engine settings, capacity check, per-node argv), then the roles' workers are
 * laid out on consecutive nodes of one allocation (prefill workers first), every node gets the
 * connector's `--kv-transfer-config` and environment, and the router on node 0 becomes the client's
 * one endpoint. Pure; throws ConfigError listing every problem.
 */
export function planDisaggregated(
  config: SweepConfig,
  opts: PlanOptions,
  planRole: (config: SweepConfig, opts: PlanOptions) => SweepPlan,
): SweepPlan {
  const o = config.orientations[opts.orientation];
  const own = o?.disaggregated;
  if (o === undefined || own === undefined)
    throw new Error(`internal planner error: orientation ${opts.orientation} is not disaggregated`);
  // the cluster's stand-in router (the simulator override's pdRouter), else the orientation's
  const override = config.clusters[opts.cluster]?.engineOverride;
  const standIn = override?.kind === 'simulator' ? override.pdRouter : undefined;
  const pd: Disaggregated = standIn === undefined ? own : { ...own, router: standIn };
  checkRoles(config, opts, o, pd);
  const planned = planRoles(config, opts, o, pd, planRole);
  // rule 26: the router's requestHeaders reach either client, infersweep's (replay.ts) or aiperf's `--header`
  // (libs/agentx/src/aiperf/argv.ts); rule 27's role gate then proves both roles served every request
  const { prefill, decode } = planned;
  const layout = layOut(pd, planned);
  const router = planRouter(pd, layout);
  const workerUrls = [...layout.endpoints.prefill, ...layout.endpoints.decode];
  const labelled = prefill.engineIds.labelled && decode.engineIds.labelled;
  const { planHash: _decodeHash, ...decodeBody } = decode;
  const body: Omit<SweepPlan, 'planHash'> = {
    ...decodeBody,
    // the allocation: nodes and GPUs of both roles; the parallelism fields are the decode worker's
    topology: allocationTopology(decode.topology, layout.nodes.length, sum(layout.roles.map((r) => r.gpus))),
    slurm: { ...decode.slurm, nodes: layout.nodes.length },
    nodes: layout.nodes,
    endpoints: [router.endpoint],
    metricsEndpoints: workerUrls.map((u) => `${u}/metrics`),
    healthEndpoints: [`${router.endpoint}/health`, ...workerUrls.map((u) => `${u}/health`)],
    clientMustBalance: false,
    engineIds: labelled
      ? { labelled: true, perMetricsEndpoint: layout.engineIds }
      : { labelled: false, reason: 'a role has no per-engine labels (see its plan)' },
    capacity: { checked: false, reason: 'disaggregated: checked per role (disaggregation.roles[].capacity)' },
    placeholders: placeholdersUsed(layout.nodes, [router.endpoint, ...router.argv]),
    warnings: disaggWarnings(pd, planned),
    notes: [
      ...new Set([...prefill.notes, ...decode.notes]),
      ...(standIn === undefined
        ? []
        : [
            `router: ${standIn.kind} stands in for the orientation's ${own.router.kind} (engine override of cluster ${opts.cluster})`,
          ]),
    ],
    disaggregation: { connector: pd.connector, router, roles: layout.roles },
  };
  return sweepPlanSchema.parse({ ...body, planHash: contentHash(body) });
}

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

/** Rules 24–26 on the config, before planning the roles: every violation at its config path. */
function checkRoles(config: SweepConfig, opts: PlanOptions, o: Orientation, pd: Disaggregated): void {
  const at = ['orientations', opts.orientation, 'disaggregated'];
  const extra = (role: DisaggRole) => [...(o.engine?.extraArgs ?? []), ...(pd[role].engine?.extraArgs ?? [])];
  const view = (role: DisaggRole) => ({
    topology: { tp: pd[role].topology.tp, pp: pd[role].topology.pp },
    workers: pd[role].workers,
    extraArgs: extra(role),
  });
  const hybrid = config.model.architecture?.linearAttention !== undefined;
  const violations = checkDisaggRoles(
    pd.connector,
    pd.router,
    { prefill: view('prefill'), decode: view('decode') },
    hybrid,
  );
  if (violations.length === 0) return;
  throw new ConfigError(
    opts.source?.file ?? '(config)',
    violations.map((v) => ({
      path: dotted([...at, ...v.path]),
      value: showValue(v.value),
      message: `${v.message} (rule ${v.rule})`,
      line: lineOf(opts.source, [...at, ...v.path]),
    })),
  );
}

/** Every role planned on its own as an aggregated orientation (rules 1–22 and 28), problems at the role's path. */
function planRoles(
  config: SweepConfig,
  opts: PlanOptions,
  o: Orientation,
  pd: Disaggregated,
  planRole: (config: SweepConfig, opts: PlanOptions) => SweepPlan,
): Record<DisaggRole, SweepPlan> {
  const issues: ConfigIssue[] = [];
  const planned: Partial<Record<DisaggRole, SweepPlan>> = {};
  for (const role of DISAGG_ROLES) {
    try {
      planned[role] = planRole(roleConfig(config, opts.orientation, o, pd, role), opts);
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      issues.push(...e.issues.map((i) => relocate(i, opts.orientation, role, opts)));
    }
  }
  if (issues.length > 0 || planned.prefill === undefined || planned.decode === undefined)
    throw new ConfigError(opts.source?.file ?? '(config)', issues);
  return { prefill: planned.prefill, decode: planned.decode };
}

interface Layout {
  nodes: PlanNode[];
  roles: DisaggRolePlan[];
  endpoints: Record<DisaggRole, string[]>;
  engineIds: string[][];
}

/**
 * The router (rule 26): vllm-router and toy-proxy on node 0 listing every worker; llm-d's pd-sidecar on the
 * decode worker's head node in front of it, the prefillers in the header the client sends.
 */
function planRouter(pd: Disaggregated, layout: Layout): DisaggRouterPlan {
  const base = { kind: pd.router.kind, ...(pd.router.version === undefined ? {} : { version: pd.router.version }) };
  if (pd.router.kind !== 'llm-d-pd-sidecar')
    return { ...base, node: 0, argv: routerArgv(pd.router, pd.connector, layout.endpoints), endpoint: ROUTER_ENDPOINT };
  const decode = layout.roles.find((r) => r.role === 'decode');
  const head = decode?.workerNodes[0]?.[0];
  if (head === undefined) throw new Error('internal planner error: a disaggregated plan without a decode worker');
  const g = pd.prefill.workers;
  return { ...base, node: head, ...sidecarRouter(pd.router, layout.endpoints, { head, port: workerPortOf(g) }) };
}

/** Rule 23: prefill workers, then decode workers, each on its own whole nodes, every node with the connector (rule 24). */
function layOut(pd: Disaggregated, planned: Record<DisaggRole, SweepPlan>): Layout {
  const out: Layout = { nodes: [], roles: [], endpoints: { prefill: [], decode: [] }, engineIds: [] };
  const env = connectorEnv(pd.connector);
  let g = 0; // the worker's index over both roles: its own port (workerPortOf)
  for (const role of DISAGG_ROLES) {
    const p = planned[role];
    const kv = kvTransferConfig(pd.connector, role);
    const workerNodes: number[][] = [];
    const workerEndpoints: string[][] = [];
    for (let w = 0; w < pd[role].workers; w++, g++) {
      const head = out.nodes.length;
      const globalOf = (k: number) => head + k;
      const port = workerPortOf(g);
      workerNodes.push(p.nodes.map((n) => globalOf(n.rank)));
      out.nodes.push(...p.nodes.map((n) => placeNode(n, { role, worker: w, port }, globalOf, kv, env)));
      // the serving endpoints of this worker, as the router reaches them (internal LB: the head only)
      const served = p.nodes.filter((n) => n.serves).map((n) => workerEndpoint(globalOf(n.rank), g));
      workerEndpoints.push(served);
      out.endpoints[role].push(...served);
      if (p.engineIds.labelled) out.engineIds.push(...p.engineIds.perMetricsEndpoint);
    }
    out.roles.push({
      role,
      workers: pd[role].workers,
      topology: p.topology,
      gpus: pd[role].workers * p.topology.gpus,
      kvTransferConfig: kv,
      settings: p.engine.settings,
      capacity: p.capacity,
      workerNodes,
      endpoints: workerEndpoints,
      warnings: p.warnings,
    });
  }
  return out;
}

/** A warning both roles give is the orientation's; one role's own is named after it; then the P/D warnings. */
function disaggWarnings(pd: Disaggregated, planned: Record<DisaggRole, SweepPlan>): string[] {
  const both = planned.prefill.warnings.filter((w) => planned.decode.warnings.includes(w));
  return [
    ...both,
    ...DISAGG_ROLES.flatMap((role) =>
      planned[role].warnings.filter((w) => !both.includes(w)).map((w) => `${role}: ${w}`),
    ),
    ...(pd.router.kind === 'toy-proxy'
      ? [
          "router toy-proxy is vLLM's test proxy (tests/v1/kv_connector/nixl_integration): fine to try a deployment, not a production router",
        ]
      : []),
    ...(pd.connector.kind === 'NixlConnector' && pd.connector.loadFailurePolicy === 'recompute'
      ? [
          'kv_load_failure_policy recompute: a failed KV transfer is prefilled again on the decode worker, silently slower (vLLM warns against it in production)',
        ]
      : []),
  ];
}

/** The whole allocation as a topology: both roles' nodes and GPUs; TP/PP/DP/EP and the replica layout are the decode worker's. */
function allocationTopology(decode: Topology, nodes: number, gpus: number): Topology {
  return { ...decode, nodes, gpus, endpoints: 'single', experimental: [], warnings: [] };
}

/** `vllm serve <model>` */
const ENTRY_LENGTH = ENTRYPOINT.length + 1;

/** One role as an aggregated orientation: its worker topology, the orientation's engine block with the role's over it. */
function roleConfig(
  config: SweepConfig,
  name: string,
  o: Orientation,
  pd: Disaggregated,
  role: DisaggRole,
): SweepConfig {
  const base = o.engine;
  const own = pd[role].engine;
  const engine: OrientationEngine = {
    ...base,
    ...own,
    extraArgs: [...(base?.extraArgs ?? []), ...(own?.extraArgs ?? [])],
    env: { ...(base?.env ?? {}), ...(own?.env ?? {}) },
  };
  const { disaggregated: _pd, ...rest } = o;
  const orientation: Orientation = { ...rest, topology: pd[role].topology, engine, search: undefined };
  return { ...config, orientations: { ...config.orientations, [name]: orientation } };
}

/** A role's issue at its own config path (`…topology.tp` → `…disaggregated.decode.topology.tp`), named after the role. */
function relocate(i: ConfigIssue, name: string, role: DisaggRole, opts: PlanOptions): ConfigIssue {
  const prefix = `orientations.${name}.`;
  if (!i.path.startsWith(`${prefix}topology`)) return { ...i, message: `${role} role: ${i.message}` };
  const path = `${prefix}disaggregated.${role}.${i.path.slice(prefix.length)}`;
  const line = lineOf(opts.source, path.split('.'));
  return { ...i, path, message: `${role} role: ${i.message}`, ...(line === undefined ? {} : { line }) };
}

/** A worker's node at its place in the allocation: placeholders moved to the worker's own nodes, the connector added. */
function placeNode(
  n: PlanNode,
  at: { role: DisaggRole; worker: number; port: string },
  globalOf: (k: number) => number,
  kv: string,
  connEnv: Record<string, string>,
): PlanNode {
  const { role, worker, port } = at;
  const head = globalOf(0);
  // node k of the worker → its allocation rank first, then the worker's head (never moved twice); the worker's port
  const move = (s: string) =>
    s
      .replace(/\{\{NODE_ADDR_(\d+)\}\}/g, (_m, k: string) => nodeAddrOf(globalOf(Number(k))))
      .replaceAll(HEAD_ADDR, nodeAddrOf(head))
      .replaceAll(PORT, port);
  // the connector's JSON keeps its HEAD_ADDR (P2pNcclConnector's proxy_ip is the router's node 0); its
  // http_port is the worker's port
  const commonArgs = [...n.commonArgs.map(move), '--kv-transfer-config', kv.replaceAll(PORT, port)];
  const deltaArgs = n.deltaArgs.map(move);
  const argv = [...n.argv.slice(0, ENTRY_LENGTH).map(move), ...commonArgs, ...deltaArgs];
  const sameLaunch = JSON.stringify(n.launchArgv) === JSON.stringify(n.argv);
  return {
    ...n,
    rank: globalOf(n.rank),
    role,
    worker,
    argv,
    commonArgs,
    deltaArgs,
    // the simulator / CPU launch of an override keeps its own argv; real vLLM launches the argv
    launchArgv: sameLaunch ? argv : n.launchArgv.map(move),
    // VLLM_HOST_IP and the side-channel host stay this node's own address ({{NODE_ADDR}})
    env: Object.fromEntries(Object.entries({ ...n.env, ...connEnv }).map(([k, v]) => [k, move(v)])),
  };
}
