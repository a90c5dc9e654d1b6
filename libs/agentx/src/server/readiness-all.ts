import { checkReadiness, type ReadinessResult } from './readiness';

/**
 * Readiness of a whole deployment (docs/topology-rules.md rule 19): every client endpoint, each with the
 * DP engines behind it. Under internal LB that is one endpoint with every engine; under hybrid or
 * external LB one endpoint per serving node, each reporting only its own ranks on its own /metrics.
 */
export interface ReadinessTarget {
  endpoint: string;
  metricsEndpoint: string;
  /** The `engine` label values this endpoint's /metrics must show, or null when the server has none. */
  engines: number[] | null;
  /** Headers of its probe request (a P/D router: the prefillers it is to send the prefill to). */
  headers?: Record<string, string>;
}

/** Pair each endpoint with its /metrics endpoint and its engines (the plan's engineIds.perMetricsEndpoint, same order). */
export function readinessTargets(
  endpoints: readonly string[],
  metricsEndpoints: readonly string[],
  engineIds: { labelled: true; perMetricsEndpoint: string[][] } | { labelled: false },
): ReadinessTarget[] {
  if (metricsEndpoints.length !== endpoints.length)
    throw new Error(`readiness: ${endpoints.length} endpoints but ${metricsEndpoints.length} metrics endpoints`);
  if (engineIds.labelled && engineIds.perMetricsEndpoint.length !== endpoints.length)
    throw new Error(
      `readiness: ${endpoints.length} endpoints but engine ids for ${engineIds.perMetricsEndpoint.length}`,
    );
  return endpoints.map((endpoint, i) => ({
    endpoint,
    metricsEndpoint: metricsEndpoints[i]!,
    engines: engineIds.labelled ? engineIds.perMetricsEndpoint[i]!.map(Number) : null,
  }));
}

/**
 * Readiness of a disaggregated (P/D) deployment: every worker of both roles on its own endpoint (its /metrics
 * endpoint's base) with its engines, then the router, whose probe request carries the client's headers and so
 * takes the whole prefill → decode path.
 */
export function disaggReadinessTargets(
  routerEndpoints: readonly string[],
  metricsEndpoints: readonly string[],
  engineIds: { labelled: true; perMetricsEndpoint: string[][] } | { labelled: false },
  headers: Record<string, string> | undefined,
): ReadinessTarget[] {
  const workers = readinessTargets(
    metricsEndpoints.map((m) => m.replace(/\/metrics$/, '')),
    metricsEndpoints,
    engineIds,
  );
  const routers = routerEndpoints.map((endpoint) => ({
    endpoint,
    metricsEndpoint: endpoint,
    engines: null,
    ...(headers === undefined ? {} : { headers }),
  }));
  return [...workers, ...routers];
}

/** Ready when every target is; otherwise the first target that is not, named in `detail`. */
export async function checkEveryEndpoint(
  targets: readonly ReadinessTarget[],
  servedModel: string,
  check: typeof checkReadiness = checkReadiness,
): Promise<ReadinessResult> {
  if (targets.length === 0) throw new Error('readiness: no endpoints');
  let last: ReadinessResult | undefined;
  for (const t of targets) {
    const r = await check(t.endpoint, servedModel, t.engines, {
      metricsEndpoint: t.metricsEndpoint,
      ...(t.headers === undefined ? {} : { headers: t.headers }),
    });
    if (!r.ready) return targets.length === 1 ? r : { ...r, detail: `${t.endpoint}: ${r.detail}` };
    last = r;
  }
  return targets.length === 1 ? last! : { ...last!, detail: `ready (${targets.length} endpoints)` };
}
