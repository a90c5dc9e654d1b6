import type { DcgmSampler } from './server/dcgm-sampler';
import type { EngineFamily } from './server/families';
import { checkIdleRanks, type IdleRankCheck } from './server/idle-ranks';
import type { Sample } from './server/prometheus';
import { engineWindows, serverMetricsWindow, type EndpointSnapshot, type ServerMetrics } from './server/window';
import { IdleRankError } from './errors';
import { ClientHealth } from './client-health';

export interface ProfileWindowInput {
  metricsEndpoints: string[];
  expectedEngines?: number[] | null;
  family: EngineFamily;
  /** Period of the server-metrics sampler during profiling. */
  intervalSeconds: number;
}

/**
 * What one point observes of the servers around its profiling phase: the idle-rank checks (at
 * readiness and after warmup), the metrics snapshots at the window's edges and during it, and the
 * client's own health. `scrape` takes one snapshot of every metrics endpoint.
 */
export class ProfileWindow {
  readonly idleChecks: IdleRankCheck[] = [];
  readonly health = new ClientHealth();
  startSnap: EndpointSnapshot[] = [];
  endSnap: EndpointSnapshot[] = [];
  readonly during: EndpointSnapshot[][] = [];
  private pointStart: Sample[] | undefined;
  private sampler: NodeJS.Timeout | undefined;
  private sampling = false;

  constructor(
    private readonly o: ProfileWindowInput,
    private readonly scrape: () => Promise<EndpointSnapshot[]>,
    /** The GPU telemetry's scrapes over the window (cluster `gpuTelemetry`); absent: none. */
    readonly dcgm?: DcgmSampler,
  ) {}

  private get checksRanks(): boolean {
    return !!this.o.expectedEngines && this.o.metricsEndpoints.length > 0;
  }

  /**
   * Readiness-phase idle-rank check (engine labels present). A missing engine is recorded, not thrown:
   * the warmup then shows whether that rank serves, and the post-warmup check ends the point invalid
   * with the rank named (the bash runner's hybrid-LB defect), keeping per-engine counts in the record.
   */
  async readiness(): Promise<void> {
    if (!this.checksRanks) {
      this.idleChecks.push(checkIdleRanks([], this.o.expectedEngines, 'readiness', this.o.family));
      return;
    }
    const snap = await this.scrape();
    const bad = snap.find((x) => x.samples === null);
    if (bad)
      throw new IdleRankError(`readiness idle-rank check: scrape of ${bad.endpoint} failed: ${bad.error}`, [], {
        step: 'readiness',
      });
    this.pointStart = snap.flatMap((x) => x.samples ?? []);
    this.idleChecks.push(checkIdleRanks(this.pointStart, this.o.expectedEngines, 'readiness', this.o.family));
  }

  /** At the end of warmup: the window's start snapshot, the post-warmup check, then sampling and health. */
  async beforeProfile(): Promise<void | { cancel: string }> {
    this.startSnap = await this.scrape();
    if (this.checksRanks) {
      // requests served during this point's warmup (since pointStart): readiness probes and earlier
      // points cannot make an idle rank look busy
      const samples = this.startSnap.flatMap((x) => x.samples ?? []);
      const c = checkIdleRanks(samples, this.o.expectedEngines, 'post-warmup', this.o.family, this.pointStart);
      this.idleChecks.push(c);
      // a deployment with an idle rank measures fewer GPUs than it claims: no profile, invalid point
      if (!c.ok) return { cancel: c.message ?? 'idle DP rank' };
    } else this.idleChecks.push(checkIdleRanks([], this.o.expectedEngines, 'post-warmup', this.o.family));
    if (this.o.metricsEndpoints.length > 0)
      this.sampler = setInterval(() => this.sample(), this.o.intervalSeconds * 1000);
    // the telemetry's first round ends before the window opens: its samples bracket the window
    await this.dcgm?.start();
    this.health.start();
  }

  private sample(): void {
    if (this.sampling) return;
    this.sampling = true;
    void this.scrape().then((s) => {
      this.during.push(s);
      this.sampling = false;
    });
  }

  /** When issuance stops: health and sampling end, the window's end snapshot. */
  async afterProfile(): Promise<void> {
    this.health.stop();
    this.stopSampling();
    // the window is closed (replay.ts stopProfile runs first): the telemetry's last round brackets it
    const [endSnap] = await Promise.all([this.scrape(), this.dcgm?.stop()]);
    this.endSnap = endSnap;
  }

  stopSampling(): void {
    clearInterval(this.sampler);
    this.dcgm?.cancel();
  }

  /**
   * The server metrics of the window. Per-engine counts run to the last profiled request's end (the
   * window's end snapshot is taken when issuance stops, before the in-flight requests finish): each
   * engine's share of the profiled requests.
   */
  async serverMetrics(profiled: boolean): Promise<ServerMetrics> {
    const server = this.o.metricsEndpoints.length
      ? serverMetricsWindow(this.startSnap, this.endSnap, this.during, this.o.family)
      : serverMetricsWindow([], [], [], this.o.family);
    if (profiled && this.startSnap.length > 0)
      server.per_engine = engineWindows(
        this.startSnap,
        await this.scrape(),
        [...this.during, this.endSnap],
        this.o.family,
      );
    return server;
  }

  /** Every snapshot the window took, for the dropped-sample warnings. */
  snapshots(): EndpointSnapshot[][] {
    return [this.startSnap, this.endSnap, ...this.during];
  }

  idleRankMessages(): string[] {
    return this.idleChecks.filter((c) => !c.ok).map((c) => c.message ?? 'idle rank');
  }
}

/** Why the server side of a point's validity is incomplete (pure). */
export function serverMetricsMissing(metricsEndpoints: number, server: ServerMetrics): string[] {
  if (metricsEndpoints === 0) return ['no metrics endpoints given'];
  const missing: string[] = [];
  if (server.tokens.prompt === null) missing.push('prompt-token counter delta unavailable');
  if (server.tokens.generation === null) missing.push('generation-token counter delta unavailable');
  if (server.kv_cache.gpu_usage_pct === null) missing.push('KV-cache usage gauge unavailable');
  return missing;
}
