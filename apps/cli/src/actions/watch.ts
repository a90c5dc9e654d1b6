/** What `infersweep watch` runs (its options are in ../commands/watch.ts). */
import { follow } from '../ops/follow';
import { withSession } from '../ops/temporal';

export interface WatchOpts {
  plain?: boolean;
  report: boolean;
}

export async function watch(id: string, opts: WatchOpts): Promise<number> {
  return withSession((s) => follow(s, id, { plain: opts.plain, report: opts.report }));
}
