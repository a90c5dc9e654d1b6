/**
 * Sweeps on the real vLLM CPU engine per commit (./vllm-sweep.ts), for what the simulator cannot
 * prove: two data-parallel engines behind vLLM's internal load balancer, each serving its share with
 * real per-engine counters, and the project's expert-parallel plugin. One deployment at a time (~5 GB
 * each, the 2 cores are shared), one point each. The PP=2 and TP=2 shapes and the c=1 points (a drain
 * gate on real vLLM gauges between two points) run nightly: local-vllm.nightly.test.ts.
 */
import { beforeAll, describe, it } from 'vitest';
import { localSlurm, realStackSuite } from '@infersweep/testkit/sweep-harness';
import { expectVllmSweep, requireVllm } from './vllm-sweep';

beforeAll(requireVllm);
const suite = realStackSuite(localSlurm());

describe('local-vllm: sweeps on the real vLLM CPU engine', () => {
  const cases: Array<[string, string]> = [
    ['balanced', 'DP=2 internal LB, node 1 headless with --data-parallel-start-rank 1'],
    ['throughput', 'DP=2 + EP=2 with the MoE model (the project plugin)'],
  ];
  for (const [orientation, shape] of cases) {
    it(`${orientation}: ${shape} — c=2 valid with real per-engine counts, logs captured, nothing left running`, async () => {
      await expectVllmSweep(suite.client(), orientation, [2]);
    }, 1_200_000);
  }
});
