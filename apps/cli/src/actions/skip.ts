/** What `infersweep skip` runs (its options are in ../commands/skip.ts). */
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { skipPointUpdate } from '@infersweep/sweep';
import { out, parsePositiveInt, ExitWith, EXIT } from '../ops/cli';
import { withSession } from '../ops/temporal';
import { pointLine } from '../ops/render';

export interface SkipOpts {
  point: string;
  reason: string;
}

export async function skip(id: string, opts: SkipOpts): Promise<void> {
  const concurrency = parsePositiveInt(opts.point, '--point');
  return withSession(async (s) => {
    try {
      const p = await s.client.workflow
        .getHandle(id)
        .executeUpdate(skipPointUpdate, { args: [{ concurrency, reason: opts.reason }] });
      const pt = p.points.find((x) => x.concurrency === concurrency);
      out(`skipped: ${pt ? pointLine(pt) : `c=${concurrency}`}`);
    } catch (e) {
      if (e instanceof WorkflowUpdateFailedError)
        throw new ExitWith(EXIT.failure, `the sweep refused: ${e.cause?.message ?? e.message}`);
      throw e;
    }
  });
}
