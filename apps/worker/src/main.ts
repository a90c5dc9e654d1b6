/**
 * infersweep worker: `nx run worker:serve -- --cluster local`
 * Env: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_TLS, TEMPORAL_API_KEY (default: the local dev server);
 * INFERSWEEP_WORKFLOW_BUNDLE: a prebuilt workflow bundle (bundleWorkflowCode output) loaded instead of
 * bundling the workflow code from source at start (the tests build one per run: test/global-setup.ts).
 * What a sweep may ask of this worker (site profiles, secret names, secrets files, aiperf executables,
 * executables launched on the nodes, results roots, tokenizers trusted to run code) is the worker's own
 * setting: INFERSWEEP_WORKER_SETTINGS (a JSON file) or
 * INFERSWEEP_WORKER_{CLUSTERS,SECRETS,SECRETS_FILES,AIPERF,NODE_BINARIES,RESULTS_ROOTS,TRUST_REMOTE_CODE_TOKENIZERS},
 * site profiles by name from the sweep config INFERSWEEP_WORKER_CONFIG (libs/orchestrator/src/worker-settings.ts).
 * INFERSWEEP_WORKER_COMPLETING_PATIENCE_SECONDS: how long release waits for a cancelled job stuck COMPLETING
 * (default 600, at most 840). INFERSWEEP_WORKER_POLL_SECONDS: the activities' poll period, readiness, step exit and
 * (twice it) liveness, one squeue on the login node each (default 1, at most 60; docs/cluster.md item 4).
 */
import { Command } from 'commander';
import {
  completingPatienceMs,
  createSweepWorker,
  loadWorkerSettings,
  pollMsFromEnv,
  temporalTarget,
} from '@infersweep/orchestrator';
import { taskQueueFor } from '@infersweep/core';

function bundle(): { codePath: string } | undefined {
  const codePath = process.env.INFERSWEEP_WORKFLOW_BUNDLE;
  return codePath ? { codePath } : undefined;
}

const program = new Command('infersweep-worker')
  .description('Run the infersweep Temporal worker for one cluster profile')
  .option(
    '--cluster <profile>',
    'cluster profile whose task queue this worker serves',
    process.env.INFERSWEEP_CLUSTER ?? 'local',
  )
  .option('--task-queue <name>', 'override the task queue (default infersweep-<cluster>)')
  .action(async (opts: { cluster: string; taskQueue?: string }) => {
    const settings = loadWorkerSettings(opts.cluster); // once, before connecting: a bad setting stops here, named
    const patience = completingPatienceMs();
    const target = temporalTarget();
    const { worker, connection, credentialsRotated } = await createSweepWorker({
      cluster: opts.cluster,
      target,
      taskQueue: opts.taskQueue,
      deps: { settings, completingPatienceMs: patience, pollMs: pollMsFromEnv() },
      workflowBundle: bundle(),
    });
    const queue = opts.taskQueue ?? taskQueueFor(opts.cluster);
    console.error(`infersweep worker: ${target.address} namespace ${target.namespace}, task queue ${queue}`);
    console.error(
      `infersweep worker: serves ${Object.keys(settings.clusters).join(', ')}; secrets ${settings.secretNames.join(', ') || 'none'}; launches ${settings.nodeBinaries.join(', ') || 'nothing'} on the nodes; results under ${settings.resultsRoots.join(', ')}`,
    );
    // a graceful stop: running activities end as retryable WorkerShutdown and resume on the next
    // worker (libs/orchestrator/src/activities/interceptor.ts). A signal may arrive more than once
    // (sent to the process group: tsx relays it to this process too); later ones must not kill it.
    let stopping = false;
    for (const sig of ['SIGINT', 'SIGTERM'] as const) {
      process.on(sig, () => {
        if (stopping) return;
        stopping = true;
        console.error(`infersweep worker: ${sig}: stopping; running activities resume on the next worker`);
        worker.shutdown();
      });
    }
    await worker.run();
    await connection.close();
    // cached SSH connections to the login host would keep the process alive; 75 (EX_TEMPFAIL): the
    // TLS files were rotated, the supervisor starts the worker again with them (docs/deploy.md)
    process.exit(credentialsRotated() ? 75 : 0);
  });

program.parseAsync(process.argv).catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
