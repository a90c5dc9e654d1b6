/**
 * The lanes of `npm test` and the floors of its gate (test/gate.ts runs and judges them; docs/testing.md).
 *
 * Four integration lanes, each on its own local stack, beside the unit project (niced):
 * - lane A: the files that load the CPU or are gated on client saturation (every real-vLLM file, so two vLLM
 *   deployments never overlap; every saturation-gated file, so two of them never overlap), in this order, then
 *   light files that even the lanes;
 * - lane C: the Slurm-only files, which mostly wait on slurmd timeouts and queues, then files that load little
 *   CPU and are not saturation-gated, so the lanes end near the same time;
 * - lane B: every other integration file (a new file lands here), then the production project (its stack uses
 *   lane B's Slurm);
 * - lane D: whole sweeps that mostly wait on allocations, losses and the simulator (recovery, production-like
 *   timings, replicates, nightly history, knee, fleet, noisy search), so the lanes end near the same time.
 * A file belongs to at most one list; the gate refuses a listed file that does not exist.
 */

export type Project = 'unit' | 'integration' | 'production' | 'nightly';

/**
 * Lane A, in this order (test/lane-sequencer.ts): first the files that need no valid point (every lane starts at
 * once, so the load peaks there, and a point measured then can rightly be refused `host_saturated`, as sweep.int's
 * c=4 was), then whole sweeps while the unit project loads the CPU, then aiperf's own file and the real-vLLM files
 * (the files that measure timing accuracy against a bound run in the quiet lane).
 */
export const LANE_A = [
  'apps/cli/test/history-unmeasured.int.test.ts',
  'libs/orchestrator/test/namespace-check.int.test.ts',
  'test/stack-hygiene.int.test.ts',
  'libs/orchestrator/test/lifecycle.int.test.ts',
  'libs/orchestrator/test/sweep.int.test.ts',
  'libs/orchestrator/test/concurrent-points.int.test.ts',
  'libs/agentx/test/aiperf.int.test.ts',
  'libs/orchestrator/test/local-vllm.int.test.ts',
  'libs/orchestrator/test/hybrid-lb.int.test.ts',
  'libs/orchestrator/test/gpu-energy.int.test.ts',
  'test/vllm/plugin.int.test.ts',
  'libs/orchestrator/test/secrets.int.test.ts',
  'apps/cli/test/schedule-run.int.test.ts',
  'libs/orchestrator/test/aiperf-head-node.int.test.ts',
  'test/smoke/temporal.int.test.ts',
  'test/smoke/simulator.int.test.ts',
  'test/smoke/slurm-ssh.int.test.ts',
  'test/smoke/web-ui.int.test.ts',
];

/**
 * The quiet lane: files that need the host to themselves, run on lane A's stack once every other lane has ended
 * (with one lane, at the end of it). The real-vLLM referee: its client's window is no measurement when the host is
 * saturated, and beside the other lanes it was in both pairs of a CI run (load 6.2 and 10.5 on 2 CPUs). The client
 * against the simulator's constants (TTFT and ITL within 2 %): beside four lanes on 2 cores the simulator's own
 * timers ran late, both means +2.2 % in the CI of 01e87ec, a host's lag and not the client's error. The InferenceX
 * export of a valid point from each client: at lane A's start the product refused ours as `host_saturated` (load 8.7
 * on 2 CPUs, CI of 9112f14; load 7.1 at 87a4c40), rightly, and the test needs a valid record. The two clients side by
 * side on the simulator (within 5 %): beside four lanes aiperf's output throughput read 5.34 % under ours (CI of
 * 8f5df76; within 2.2 % in the four CIs before it): aiperf's worker, like the simulator's timers above, ran late.
 */
export const QUIET = [
  'libs/agentx/test/cross-client.int.test.ts',
  'libs/agentx/test/agentx.int.test.ts',
  'libs/orchestrator/test/fidelity.int.test.ts',
  'libs/agentx/test/cross-client-vllm.int.test.ts',
];

/** Lane C: the Slurm-only files, then light files moved from lane B to even the lanes' wall times. */
export const LANE_C = [
  'libs/slurm/test/reliability.int.test.ts',
  'libs/slurm/test/failures.int.test.ts',
  'libs/slurm/test/lifecycle.int.test.ts',
  'libs/slurm/test/sites.int.test.ts',
  'libs/slurm/test/ssh.int.test.ts',
  'libs/slurm/test/image.int.test.ts',
  'apps/cli/test/cli.int.test.ts',
  'apps/cli/test/ended-sweeps.int.test.ts',
  'libs/agentx/test/goodput.int.test.ts',
  'apps/cli/test/fleet-faults.int.test.ts',
  'libs/orchestrator/test/snapshot.int.test.ts',
  'libs/orchestrator/test/pd-recovery.int.test.ts',
];

/** Lane D: sweeps that hold several allocations in turn and load the CPU little (light, not saturation-gated). */
export const LANE_D = [
  'libs/orchestrator/test/sweep-recovery.int.test.ts',
  'libs/orchestrator/test/timings.int.test.ts',
  'apps/cli/test/replicates.int.test.ts',
  'apps/cli/test/history.int.test.ts',
  'libs/orchestrator/test/knee.int.test.ts',
  'apps/cli/test/fleet.int.test.ts',
  'libs/orchestrator/test/noisy-search.int.test.ts',
];

/** Each lane's stack: its slot and data directory, from the environment or these defaults. */
export const SLOTS = {
  a: { slot: 'INFERSWEEP_STACK_SLOT', data: 'INFERSWEEP_DATA', defaultSlot: '0' },
  b: { slot: 'INFERSWEEP_LANE_B_SLOT', data: 'INFERSWEEP_LANE_B_DATA', defaultSlot: '9' },
  c: { slot: 'INFERSWEEP_LANE_C_SLOT', data: 'INFERSWEEP_LANE_C_DATA', defaultSlot: '8' },
  d: { slot: 'INFERSWEEP_LANE_D_SLOT', data: 'INFERSWEEP_LANE_D_DATA', defaultSlot: '7' },
} as const;

/** The unit project's niceness beside the lanes (INFERSWEEP_UNIT_NICE): it takes the CPU the lanes leave. */
export const UNIT_NICE = 10;

/**
 * The floors: at least this many tests and files must run per project (TEST_FLOORS, a JSON object of the same
 * shape, overrides them). They equal the counts of `npx vitest list --project <name> --json`: raise them in the
 * commit that adds tests (other branches add tests too: count on the merged tree), lower them only in the
 * commit that removes tests.
 */
export const FLOORS: Record<Project, { tests: number; files: number }> = {
  unit: { tests: 1246, files: 158 },
  integration: { tests: 176, files: 50 },
  production: { tests: 12, files: 6 },
  nightly: { tests: 16, files: 8 },
};
