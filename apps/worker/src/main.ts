/**
 * infersweep worker: `nx run worker:serve -- --cluster local`
 * Env: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_TLS, TEMPORAL_API_KEY (default: the local dev server).
 */
import { Command } from 'commander';
import { createSweepWorker } from './worker';
import { temporalTarget } from './temporal-env';
import { taskQueueFor } from '@infersweep/sweep';

const program = new Command('infersweep-worker')
  .description('Run the infersweep Temporal worker for one cluster profile')
  .option('--cluster <profile>', 'cluster profile whose task queue this worker serves', process.env.INFERSWEEP_CLUSTER ?? 'local')
  .option('--task-queue <name>', 'override the task queue (default infersweep-<cluster>)')
  .action(async (opts: { cluster: string; taskQueue?: string }) => {
    const target = temporalTarget();
    const { worker } = await createSweepWorker({ cluster: opts.cluster, target, taskQueue: opts.taskQueue });
    const queue = opts.taskQueue ?? taskQueueFor(opts.cluster);
    console.error(`infersweep worker: ${target.address} namespace ${target.namespace}, task queue ${queue}`);
    for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => worker.shutdown());
    await worker.run();
  });

program.parseAsync(process.argv).catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
