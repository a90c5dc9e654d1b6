/**
 * Every shape of the local-vllm profile on the real vLLM CPU engine, nightly (./vllm-sweep.ts): PP=2,
 * DP=2, DP=2 + EP=2 (the project plugin) and TP=2, two points each (the drain gate on real vLLM
 * gauges runs between them). One deployment at a time (~5 GB each).
 */
import { beforeAll, describe, it } from 'vitest';
import { localSlurm, realStackSuite } from '@infersweep/testkit/sweep-harness';
import { expectVllmSweep, requireVllm } from './vllm-sweep';

beforeAll(requireVllm);
const suite = realStackSuite(localSlurm());

describe('local-vllm: every shape on the real vLLM CPU engine', () => {
  const cases: Array<[string, string]> = [
    ['latency', 'PP=2 across 2 nodes (--nnodes form, node 1 headless)'],
    ['balanced', 'DP=2 internal LB, node 1 headless with --data-parallel-start-rank 1'],
    ['throughput', 'DP=2 + EP=2 with the MoE model (the project plugin)'],
    ['tp', 'TP=2 across 2 nodes'],
  ];
  for (const [orientation, shape] of cases) {
    it(`${orientation}: ${shape} — c=1 and c=2 valid with real per-engine counts, logs captured, nothing left running`, async () => {
      await expectVllmSweep(suite.client(), orientation, [1, 2]);
    }, 1_200_000);
  }
});
