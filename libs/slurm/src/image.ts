/**
 * A container image as an enroot squash file on shared storage: one import per squash path,
 * under a lock, reused when valid.
 */
import { randomUUID } from 'node:crypto';
import { posix } from 'node:path';
import { tail, type ErrorContext } from '@infersweep/core';
import { ImageImportError, ImageLockTimeout, ImageMissingError } from './errors';
import { ENROOT_IMPORT, IMPORT_EXIT, imageFileName, importArgv, srunArgv } from './commands';
import { importErrorIsMissingImage } from './parse';
import { setupErrorOf, type SlurmQueries } from './queries';

export interface ImportImageRequest {
  image: string;
  squashDir: string;
  lockTimeoutSeconds: number;
  /** Default `enroot import -o {out} docker://{image}`; `{out}` / `{image}` are substituted. */
  importCommand?: string[];
  /** Upper bound for the whole import (lock wait + import); default lock wait + 1 h. */
  timeoutMs?: number;
  /**
   * Run the import on a compute node of an allocation (`srun --overlap` on that node, InferenceX's way)
   * instead of where the executor runs (the login node); `env` (e.g. ENROOT_CACHE_PATH) goes with it.
   */
  onNode?: { jobId: string; node: string; env?: Record<string, string> };
}

export interface ImportImageResult {
  squashPath: string;
  imported: boolean;
  durationMs: number;
}

/**
 * One import per squash path, under `flock -w lockTimeoutSeconds`. A lock not acquired in
 * time → ImageLockTimeout (never a fall-through); a valid existing file is reused; a fresh
 * import goes to a temporary name, is validated with `unsquashfs -l` and renamed into place.
 */
export async function importImage(q: Pick<SlurmQueries, 'exec'>, req: ImportImageRequest): Promise<ImportImageResult> {
  if (!req.squashDir.startsWith('/'))
    throw new TypeError(`squashDir must be absolute: ${JSON.stringify(req.squashDir)}`);
  const squashPath = posix.join(req.squashDir, imageFileName(req.image));
  const argv = importArgv({
    squashPath,
    lockPath: `${squashPath}.lock`,
    lockTimeoutSeconds: req.lockTimeoutSeconds,
    tmpPath: `${squashPath}.tmp-${randomUUID().slice(0, 12)}`,
    image: req.image,
    importCommand: req.importCommand ?? ENROOT_IMPORT,
  });
  const ctx: ErrorContext = {
    step: 'import-image',
    image: req.image,
    squashPath,
    ...(req.onNode ? { jobId: req.onNode.jobId, node: req.onNode.node } : {}),
  };
  const run = req.onNode
    ? srunArgv({
        jobId: req.onNode.jobId,
        node: req.onNode.node,
        stepName: 'infersweep-import',
        argv,
        env: req.onNode.env ?? {},
        runtime: 'host',
      })
    : argv;
  const r = await q.exec.run(run, { timeoutMs: req.timeoutMs ?? req.lockTimeoutSeconds * 1000 + 3_600_000 });
  const logTail = tail(r.stderr || r.stdout);
  if (r.code === 0)
    return { squashPath, imported: /infersweep-image: imported/.test(r.stdout), durationMs: r.durationMs };
  const setup = setupErrorOf(
    r.code === IMPORT_EXIT.importFailed ? null : r.code,
    r.stderr,
    '',
    `import of ${req.image}`,
    ctx,
  );
  if (setup) throw setup;
  if (r.code === IMPORT_EXIT.lockTimeout)
    throw new ImageLockTimeout(`lock on ${squashPath} not acquired within ${req.lockTimeoutSeconds} s`, {
      context: { ...ctx, logTail },
    });
  if (r.code === IMPORT_EXIT.importFailed && importErrorIsMissingImage(r.stderr))
    throw new ImageMissingError(`image ${req.image} not found`, { context: { ...ctx, logTail } });
  throw new ImageImportError(`import of ${req.image} failed (rc=${r.code})`, { context: { ...ctx, logTail } });
}
