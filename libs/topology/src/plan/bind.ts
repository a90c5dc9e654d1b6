import { BindError } from '../config/errors';
import { fnv1a64 } from '@infersweep/core';
import { PLACEHOLDER_RE } from '../topology/placeholders';
import { routerLaunched } from './launches';
import { boundDeploymentSchema, type BoundDeployment, type SweepPlan } from './schema';

/** Fixed, disjoint port ranges (below Linux's ephemeral range 32768+, which ZMQ uses). */
export const PORT_RANGES = {
  port: { base: 20000, size: 4000 },
  dpRpcPort: { base: 24000, size: 4000 },
  masterPort: { base: 28000, size: 4000 },
  /** The P/D router on node 0 (rule 26). */
  routerPort: { base: 16000, size: 4000 },
} as const;

/** Ports between two workers of a disaggregated plan (`{{PORT_g}}` = port + g × stride): room for a worker's DP ranks. */
export const WORKER_PORT_STRIDE = 64;

export interface DerivedPorts {
  port: number;
  dpRpcPort: number;
  masterPort: number;
  routerPort: number;
}

/**
 * Ports from the Slurm job id (rule 16): the same offset into three disjoint ranges, so the three
 * are always distinct, identical on every node, and consecutive jobs get different ports.
 */
export function derivePorts(jobId: string): DerivedPorts {
  const id = jobId.trim();
  if (id === '') throw new BindError('jobId is empty: ports are derived from the Slurm job id');
  const size = PORT_RANGES.port.size;
  const offset = /^\d+$/.test(id)
    ? Number(BigInt(id) % BigInt(size))
    : Number(BigInt(`0x${fnv1a64(id)}`) % BigInt(size));
  return {
    port: PORT_RANGES.port.base + offset,
    dpRpcPort: PORT_RANGES.dpRpcPort.base + offset,
    masterPort: PORT_RANGES.masterPort.base + offset,
    routerPort: PORT_RANGES.routerPort.base + offset,
  };
}

export interface BindOptions {
  jobId: string;
  /** Node names in Slurm order (SLURM_JOB_NODELIST / SLURM_PROCID order); nodes[0] is the head. */
  nodes: readonly string[];
  /** Address of node 0 as the other nodes reach it. */
  headAddress: string;
  /** Address of each node (default: the node names). */
  nodeAddresses?: readonly string[];
}

/**
 * Fill the plan's placeholders for one allocation. Pure. Every placeholder must be filled and no
 * value may be empty; anything else is a BindError (never an empty PORT in `vllm serve`).
 */
export function bindPlan(plan: SweepPlan, opts: BindOptions): BoundDeployment {
  const ctx = { jobId: opts.jobId };
  if (opts.nodes.length !== plan.slurm.nodes) {
    throw new BindError(
      `plan ${plan.orientation} needs ${plan.slurm.nodes} nodes, allocation has ${opts.nodes.length} (${opts.nodes.join(',')})`,
      ctx,
    );
  }
  const addresses = opts.nodeAddresses ?? opts.nodes;
  if (addresses.length !== opts.nodes.length) {
    throw new BindError(`nodeAddresses has ${addresses.length} entries for ${opts.nodes.length} nodes`, ctx);
  }
  opts.nodes.forEach((n, i) => {
    if (n.trim() === '') throw new BindError(`node name ${i} is empty`, ctx);
    if ((addresses[i] ?? '').trim() === '')
      throw new BindError(`address of node ${i} (${n}) is empty`, { ...ctx, node: n });
  });
  if (opts.headAddress.trim() === '') throw new BindError('headAddress is empty', ctx);
  const ports = derivePorts(opts.jobId);

  const values: Record<string, string> = {
    HEAD_ADDR: opts.headAddress,
    PORT: String(ports.port),
    DP_RPC_PORT: String(ports.dpRpcPort),
    MASTER_PORT: String(ports.masterPort),
    ROUTER_PORT: String(ports.routerPort),
  };
  addresses.forEach((a, i) => (values[`NODE_ADDR_${i}`] = a));

  const workerPort = (name: string): string | undefined => {
    const g = /^PORT_(\d+)$/.exec(name)?.[1];
    return g === undefined ? undefined : String(ports.port + Number(g) * WORKER_PORT_STRIDE);
  };
  const fill = (s: string, where: string, extra: Record<string, string> = {}): string => {
    const out = s.replace(PLACEHOLDER_RE, (m, name: string) => extra[name] ?? values[name] ?? workerPort(name) ?? m);
    const left = out.match(PLACEHOLDER_RE);
    if (left) throw new BindError(`${where}: placeholder ${left.join(', ')} has no value`, ctx);
    if (out.trim() === '') throw new BindError(`${where}: value is empty`, ctx);
    return out;
  };

  const nodes = plan.nodes.map((n) => {
    const node = opts.nodes[n.rank] ?? '';
    const own = { NODE_ADDR: addresses[n.rank] ?? '' };
    const where = `node ${n.rank} (${node})`;
    return {
      rank: n.rank,
      node,
      address: own.NODE_ADDR,
      serves: n.serves,
      argv: n.argv.map((a, i) => fill(a, `${where} argv[${i}]`, own)),
      env: Object.fromEntries(Object.entries(n.env).map(([k, v]) => [k, fill(v, `${where} env ${k}`, own)])),
      launchArgv: n.launchArgv.map((a, i) => fill(a, `${where} launchArgv[${i}]`, own)),
    };
  });
  return boundDeploymentSchema.parse({
    planHash: plan.planHash,
    jobId: opts.jobId,
    headAddress: opts.headAddress,
    // the router port only for plans that run a router (bound deployments before it existed have none)
    ports: plan.placeholders.includes('ROUTER_PORT')
      ? ports
      : { port: ports.port, dpRpcPort: ports.dpRpcPort, masterPort: ports.masterPort },
    nodes,
    endpoints: plan.endpoints.map((e) => fill(e, 'endpoint')),
    metricsEndpoints: plan.metricsEndpoints.map((e) => fill(e, 'metrics endpoint')),
    healthEndpoints: plan.healthEndpoints.map((e) => fill(e, 'health endpoint')),
    clientMustBalance: plan.clientMustBalance,
    engineIds: plan.engineIds,
    ...boundRouter(plan, opts, fill),
  });
}

/** A P/D plan's router launched by infersweep (llm-d-pd-sidecar): its node, argv and the headers every request carries. */
function boundRouter(
  plan: SweepPlan,
  opts: BindOptions,
  fill: (s: string, where: string) => string,
): Pick<BoundDeployment, 'router' | 'requestHeaders'> {
  const r = plan.disaggregation?.router;
  if (r === undefined || !routerLaunched(r.kind)) return {};
  return {
    router: {
      rank: r.node,
      node: opts.nodes[r.node] ?? '',
      argv: r.argv.map((a, i) => fill(a, `router argv[${i}]`)),
      env: Object.fromEntries(Object.entries(r.env ?? {}).map(([k, v]) => [k, fill(v, `router env ${k}`)])),
      endpoint: fill(r.endpoint, 'router endpoint'),
    },
    ...(r.requestHeaders === undefined
      ? {}
      : {
          requestHeaders: Object.fromEntries(
            Object.entries(r.requestHeaders).map(([k, v]) => [k, fill(v, `request header ${k}`)]),
          ),
        }),
  };
}
