import { describe, expect, it } from 'vitest';
import { planContentHash, placeholdersUsed } from '../../src/plan/assemble-plan';
import { planSweep } from '../../src/plan/plan';
import { HEAD_ADDR, NODE_ADDR, PORT } from '../../src/topology/placeholders';
import { draftOf } from './fixture';

describe('assemblePlan', () => {
  it('the plan hash is the content hash of everything else, and any change changes it', () => {
    const { config } = draftOf('balanced');
    const plan = planSweep(config, { orientation: 'balanced', cluster: 'h200' });
    expect(planContentHash(plan)).toBe(plan.planHash);
    expect(planContentHash({ ...plan, points: [4] })).not.toBe(plan.planHash);
  });

  it('placeholders are collected from argv, launch argv, env and endpoints, sorted and once each', () => {
    const node = {
      rank: 0,
      serves: true,
      argv: ['--x', PORT],
      launchArgv: [HEAD_ADDR],
      env: { H: NODE_ADDR },
      commonArgs: [],
      deltaArgs: [],
      dpRanks: [0],
    };
    expect(placeholdersUsed([node, node], [`http://${HEAD_ADDR}:1`])).toEqual(['HEAD_ADDR', 'NODE_ADDR', 'PORT']);
  });
});
