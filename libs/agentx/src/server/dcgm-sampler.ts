import type { DcgmScrape } from './energy';
import { scrapeText } from './scrape';

/** One node's DCGM exporter: the node it measures and its URL. */
export interface DcgmTarget {
  host: string;
  url: string;
}

/**
 * The DCGM exporters of an allocation (pure): `http://<address>:<port>/metrics` for each node, named by the
 * node. Nodes that share an address (one host running several Slurm nodes) share one exporter: it is
 * scraped once, under the first such node's name, never counted twice.
 */
export function dcgmExporterTargets(nodes: readonly { node: string; address: string }[], port: number): DcgmTarget[] {
  const out: DcgmTarget[] = [];
  for (const n of nodes) {
    const host = n.address.includes(':') && !n.address.startsWith('[') ? `[${n.address}]` : n.address;
    const url = `http://${host}:${port}/metrics`;
    if (!out.some((t) => t.url === url)) out.push({ host: n.node, url });
  }
  return out;
}

export interface DcgmSamplerOptions {
  targets: readonly DcgmTarget[];
  intervalSeconds: number;
  /** One scrape's text; throws when the exporter does not answer with one. */
  fetchText(url: string): Promise<string>;
  /** The client's clock (the replay's monotonic ms): every scrape is stamped with it when its answer arrives. */
  now(): number;
}

/**
 * Timed scrapes of every node's DCGM exporter over a profile window: one round at `start` (before the
 * window opens), one every `intervalSeconds` while it runs (a round still in flight skips the tick) and
 * one at `stop` (after it closes). A failed scrape is kept as an error sample, never dropped:
 * `dcgmPointEnergy` then marks power invalid.
 */
export class DcgmSampler {
  readonly scrapes: DcgmScrape[] = [];
  private timer: NodeJS.Timeout | undefined;
  private round: Promise<void> | null = null;

  constructor(private readonly o: DcgmSamplerOptions) {}

  /** The window's first round, then the periodic rounds. */
  async start(): Promise<void> {
    await this.sampleAll();
    this.timer = setInterval(() => {
      if (this.round === null) void this.sampleAll();
    }, this.o.intervalSeconds * 1000);
  }

  /** No more periodic rounds; the round in flight finishes, then the window's last round. */
  async stop(): Promise<void> {
    this.cancel();
    if (this.round !== null) await this.round;
    await this.sampleAll();
  }

  /** No more periodic rounds (a point that ends without its window's last round). */
  cancel(): void {
    clearInterval(this.timer);
  }

  private sampleAll(): Promise<void> {
    const round = Promise.all(
      this.o.targets.map(async ({ host, url }) => {
        try {
          const text = await this.o.fetchText(url);
          this.scrapes.push({ t: this.o.now(), host, text });
        } catch (err) {
          this.scrapes.push({ t: this.o.now(), host, error: err instanceof Error ? err.message : String(err) });
        }
      }),
    ).then(() => {
      this.round = null;
    });
    this.round = round;
    return round;
  }
}

/**
 * The sampler of a point's telemetry (the plan's exporters and interval), each scrape bounded by the point's scrape
 * timeout and stamped by `now`: the replay's clock for infersweep's client (../point.ts), the wall clock for aiperf
 * (../aiperf/run.ts).
 */
export function pointDcgmSampler(
  telemetry: { targets: readonly DcgmTarget[]; intervalSeconds: number },
  scrapeTimeoutSeconds: number,
  now: () => number,
): DcgmSampler {
  return new DcgmSampler({
    targets: telemetry.targets,
    intervalSeconds: telemetry.intervalSeconds,
    fetchText: (url) => scrapeText(url, scrapeTimeoutSeconds),
    now,
  });
}
