/**
 * The worker's node quarantine: nodes a failed attempt implicated (libs/core/src/attempt-class.ts)
 * are kept out of the cluster's next allocations (`salloc --exclude`, ./activities/allocation.ts)
 * until they expire or an operator clears them (`infersweep nodes`). A node-class failure
 * quarantines at once; other suspicions are strikes, and two strikes within the expiry window
 * quarantine (libs/sweep/src/attempt-decision.ts). Worker-owned: one JSON file per cluster in the
 * worker's data folder (`<INFERSWEEP_DATA>/quarantine/<cluster>.json`), written under a lock file
 * and renamed into place, so the worker and the CLI on its host never lose each other's changes.
 */
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { ATTEMPT_CLASSES, dataDirOf } from '@infersweep/core';
import { quarantinedBy, type QuarantineStep } from '@infersweep/sweep';

/** How long a quarantine (and a strike) lasts unless cleared: `INFERSWEEP_WORKER_QUARANTINE_HOURS`, default 24. */
const QUARANTINE_HOURS_ENV = 'INFERSWEEP_WORKER_QUARANTINE_HOURS';
const DEFAULT_HOURS = 24;

const suspicionSchema = z.object({
  at: z.string(),
  class: z.enum(ATTEMPT_CLASSES),
  rule: z.string(),
  evidence: z.string().optional(),
  sweepId: z.string(),
  jobId: z.string().optional(),
});
const entrySchema = suspicionSchema.extend({ until: z.string(), strikes: z.number().int().positive() });
const fileSchema = z.object({
  quarantined: z.record(z.string(), entrySchema).default({}),
  strikes: z.record(z.string(), z.array(suspicionSchema)).default({}),
});
export type QuarantineEntry = z.infer<typeof entrySchema> & { node: string };
type Suspicion = z.infer<typeof suspicionSchema>;
type QuarantineFile = z.infer<typeof fileSchema>;

export interface Implication extends Omit<Suspicion, 'at'> {
  nodes: string[];
  step: QuarantineStep;
}

/**
 * Apply one failure's implication to a quarantine (pure): strikes older than the window are
 * forgotten, each node gets its strike, and a node quarantined by the rule is entered with an expiry.
 * Returns the nodes this implication quarantined (already quarantined ones included).
 */
export function implicate(q: QuarantineFile, i: Implication, now: Date, hours: number): string[] {
  const at = now.toISOString();
  const windowStart = now.getTime() - hours * 3_600_000;
  const out: string[] = [];
  for (const node of i.nodes) {
    if (i.step === 'none') continue;
    const { nodes: _n, step: _s, ...why } = i;
    const strikes = [...(q.strikes[node] ?? []).filter((s) => Date.parse(s.at) >= windowStart), { ...why, at }];
    q.strikes[node] = strikes;
    if (!quarantinedBy(i.step, strikes.length) && !active(q, node, now)) continue;
    q.quarantined[node] = {
      ...why,
      at,
      until: new Date(now.getTime() + hours * 3_600_000).toISOString(),
      strikes: strikes.length,
    };
    out.push(node);
  }
  return out;
}

const active = (q: QuarantineFile, node: string, now: Date): boolean => {
  const e = q.quarantined[node];
  return !!e && Date.parse(e.until) > now.getTime();
};

/** The quarantine of one cluster in the worker's data folder. */
export class QuarantineStore {
  readonly file: string;
  constructor(
    readonly cluster: string,
    dataDir = dataDirOf(process.env),
    readonly hours = quarantineHours(process.env),
  ) {
    if (!/^[A-Za-z0-9._-]+$/.test(cluster)) throw new TypeError(`not a cluster name: ${JSON.stringify(cluster)}`);
    this.file = join(dataDir, 'quarantine', `${cluster}.json`);
  }

  /** The nodes quarantined now (expired entries are left out), by node name. */
  list(now = new Date()): QuarantineEntry[] {
    const q = this.read();
    return Object.entries(q.quarantined)
      .filter(([node]) => active(q, node, now))
      .map(([node, e]) => ({ node, ...e }))
      .sort((a, b) => a.node.localeCompare(b.node));
  }

  /** Record a failure's implication; the nodes it quarantined. */
  implicate(i: Implication, now = new Date()): string[] {
    return this.update((q) => implicate(q, i, now, this.hours));
  }

  /** Clear nodes (or every node: `all`) of their quarantine and strikes; the nodes cleared. */
  clear(nodes: string[] | 'all'): string[] {
    return this.update((q) => {
      const names = nodes === 'all' ? [...new Set([...Object.keys(q.quarantined), ...Object.keys(q.strikes)])] : nodes;
      const cleared = names.filter((n) => q.quarantined[n] !== undefined || q.strikes[n] !== undefined);
      for (const n of names) {
        delete q.quarantined[n];
        delete q.strikes[n];
      }
      return cleared.sort();
    });
  }

  private read(): QuarantineFile {
    if (!existsSync(this.file)) return fileSchema.parse({});
    return fileSchema.parse(JSON.parse(readFileSync(this.file, 'utf8')));
  }

  /** Read, change and write back under the lock file (a stale lock, older than 30 s, is taken over). */
  private update<T>(change: (q: QuarantineFile) => T): T {
    mkdirSync(join(this.file, '..'), { recursive: true });
    const lock = `${this.file}.lock`;
    const deadline = Date.now() + 10_000;
    for (;;) {
      try {
        closeSync(openSync(lock, 'wx'));
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        if (Date.now() - mtimeMs(lock) > 30_000) rmSync(lock, { force: true });
        else if (Date.now() > deadline) throw new Error(`quarantine ${this.file} locked for 10 s (${lock})`);
        else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
      }
    }
    try {
      const q = this.read();
      const r = change(q);
      const tmp = `${this.file}.${process.pid}.tmp`;
      writeFileSync(tmp, `${JSON.stringify(q, null, 2)}\n`);
      renameSync(tmp, this.file);
      return r;
    } finally {
      rmSync(lock, { force: true });
    }
  }
}

function mtimeMs(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return Date.now();
  }
}

export function quarantineHours(env: Record<string, string | undefined>): number {
  const v = env[QUARANTINE_HOURS_ENV];
  if (v === undefined || v === '') return DEFAULT_HOURS;
  const h = Number(v);
  if (!Number.isFinite(h) || h <= 0)
    throw new TypeError(`${QUARANTINE_HOURS_ENV}=${v}: give the hours a quarantine lasts, a positive number`);
  return h;
}
