/**
 * The snapshot config: a matrix of cells (config × orientation × cluster) run as one batch within a
 * window, with what happens to a cell whose sweep fails (libs/sweep/src/snapshot.ts plans and judges
 * it; libs/orchestrator/src/workflows/snapshot.ts runs it). Pure: the caller reads the file.
 *
 *     name: weekly
 *     windowSeconds: 86400          # "same batch": every cell runs within 24 h of the start
 *     retryEverySeconds: 1800       # a cell whose cluster cannot allocate tries again after 30 min
 *     policy: retry-later           # a cell whose sweep failed otherwise: re-place | retry-later | operator
 *     matrix:
 *       - config: configs/local.yaml
 *         orientations: all
 *         clusters: [east, west]
 */
import { z } from 'zod';
import { ConfigError } from './errors';
import { readYamlMapping, zodIssuesToConfigIssues } from './parse';

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** Retries of one lane within a window (windowSeconds / retryEverySeconds), bounding the snapshot's history. */
export const MAX_TRIES_PER_WINDOW = 200;

/**
 * What a cell whose sweep failed for a reason other than its cluster being unavailable gets:
 * `re-place` runs it again at once (fresh allocations), `retry-later` after `retryEverySeconds`,
 * `operator` when an operator answers (the snapshot's retryCell update); each within the window and
 * `maxCellAttempts`. A cell whose cluster cannot allocate always retries later within the window.
 */
export const CELL_POLICIES = ['re-place', 'retry-later', 'operator'] as const;
export const cellPolicySchema = z.enum(CELL_POLICIES);
export type CellPolicy = z.infer<typeof cellPolicySchema>;

const positiveSeconds = (what: string) =>
  z.number().positive(`${what} is a number of seconds > 0, e.g. 1800 (30 minutes)`);

export const snapshotRowSchema = z
  .object({
    /** the sweep config file of these cells, as `--config` takes it (from the current folder, else the repository's) */
    config: z.string().min(1, 'name a sweep config file, e.g. configs/local.yaml'),
    /** orientations of that config: `all`, or a list of names */
    orientations: z
      .union([z.literal('all'), z.array(z.string().min(1)).min(1, 'list at least one orientation, or write all')])
      .default('all'),
    /** cluster profiles of that config to run every orientation on */
    clusters: z
      .array(z.string().regex(NAME, 'a cluster profile name, e.g. east'))
      .min(1, 'list at least one cluster profile of the config, e.g. [east, west]'),
    /** only these concurrency points (default: the orientation's own) */
    points: z.array(z.number().int().positive()).min(1).optional(),
    /** this row's cells' completion policy (default: the snapshot's) */
    policy: cellPolicySchema.optional(),
  })
  .strict();

export const snapshotConfigSchema = z
  .object({
    name: z.string().regex(NAME, "letters, digits, '.', '_' and '-' (it becomes part of the workflow id), e.g. weekly"),
    /** the "same batch" window: a cell not run within it is reported not run */
    windowSeconds: positiveSeconds('windowSeconds').default(86_400),
    /** how long a cell waits before it tries again (cluster unavailable, or the `retry-later` policy) */
    retryEverySeconds: positiveSeconds('retryEverySeconds').default(1800),
    /**
     * How long a cell's sweep waits once its allocation attempts are spent (its operator wait) before
     * the cell counts as "cluster unavailable" and retries later.
     */
    unavailableAfterSeconds: positiveSeconds('unavailableAfterSeconds').default(60),
    policy: cellPolicySchema.default('retry-later'),
    /** attempts of a cell whose sweep failed (its cluster being unavailable does not count) */
    maxCellAttempts: z.number().int().min(1, 'maxCellAttempts is at least 1').default(3),
    /** cells of one cluster run one after another; this many at once per cluster */
    cellsPerCluster: z.number().int().min(1, 'cellsPerCluster is at least 1').default(1),
    matrix: z.array(snapshotRowSchema).min(1, 'list at least one row {config, orientations, clusters}'),
  })
  .strict()
  // (a window already refused above is not compared again)
  // a lane tries its cell at most every retryEverySeconds: each try adds ~11 events to the snapshot's history
  .refine((s) => !(s.windowSeconds > 0) || s.windowSeconds / s.retryEverySeconds <= MAX_TRIES_PER_WINDOW, {
    message: `windowSeconds / retryEverySeconds must be at most ${MAX_TRIES_PER_WINDOW}, or the snapshot's history outgrows Temporal's limits; raise retryEverySeconds`,
    path: ['retryEverySeconds'],
  })
  .refine((s) => !(s.windowSeconds > 0) || s.retryEverySeconds < s.windowSeconds, {
    message: 'retryEverySeconds must be shorter than windowSeconds, or a cell could never try again within the window',
    path: ['retryEverySeconds'],
  });

export type SnapshotConfig = z.infer<typeof snapshotConfigSchema>;

/**
 * Parse and validate a snapshot config from YAML text. Throws ConfigError naming every problem
 * (file, YAML path, value, fix, line).
 */
export function parseSnapshotConfig(text: string, file: string): SnapshotConfig {
  const { raw, source } = readYamlMapping(
    text,
    file,
    'a snapshot config is a YAML mapping (name, windowSeconds, matrix, …)',
  );
  const parsed = snapshotConfigSchema.safeParse(raw);
  if (!parsed.success)
    throw new ConfigError(file, zodIssuesToConfigIssues(parsed.error.issues, raw, source, snapshotConfigSchema));
  return parsed.data;
}
