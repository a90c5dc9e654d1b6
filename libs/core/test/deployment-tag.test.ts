import { describe, expect, it } from 'vitest';
import { allocationJobName, deploymentJobPrefix, deploymentTag, isAllocationOf, JOB_NAME_PREFIX } from '../src/index';

describe('deployment-scoped job names', () => {
  it('the tag carries the configured id readably and namespace + id as a hash', () => {
    const a = deploymentTag('default', 'team-a');
    expect(a).toMatch(/^team-a\.[0-9a-f]{6}$/);
    expect(deploymentTag('default', 'team-a')).toBe(a);
    expect(deploymentTag('prod', 'team-a')).not.toBe(a);
    expect(deploymentTag('default', 'team-b')).not.toBe(a);
    expect(deploymentTag('default', 'we ird/$(id)')).toMatch(/^we-ird-id-\.[0-9a-f]{6}$/);
    expect(() => deploymentTag('default', ' ')).toThrow();
  });

  it('job names of a deployment start with its prefix; names of another deployment do not', () => {
    const mine = deploymentTag('default', 'a');
    const theirs = deploymentTag('default', 'b');
    const name = allocationJobName('sweep-cfg-balanced-h200-x', 2, mine);
    expect(name.startsWith(deploymentJobPrefix(mine))).toBe(true);
    expect(name).toMatch(/-a2$/);
    expect(allocationJobName('sweep-cfg-balanced-h200-x', 2, theirs).startsWith(deploymentJobPrefix(mine))).toBe(false);
    expect(name.length).toBeLessThanOrEqual(200);
  });

  it('a job name belongs to the sweep whose id it was made from, whatever its tag and attempt; never to another', () => {
    const id = 'sweep-cfg-balanced-h200-x';
    const tag = deploymentTag('default', 'b');
    for (const name of [allocationJobName(id, 1, tag), allocationJobName(id, 12, deploymentTag('default', 'a'))])
      expect(isAllocationOf(name, id)).toBe(true);
    // another sweep: another hash, even when its readable tail is the same (truncated to 40 characters)
    const longA = `sweep-${'x'.repeat(50)}-a`;
    const longB = `sweep-${'x'.repeat(50)}-b`;
    expect(isAllocationOf(allocationJobName(longA, 1, tag), longB)).toBe(false);
    expect(isAllocationOf(allocationJobName('sweep-other', 1, tag), id)).toBe(false);
    // not an allocation name at all: another prefix, no attempt suffix
    expect(isAllocationOf(allocationJobName(id, 1, tag).replace(JOB_NAME_PREFIX, 'evil-'), id)).toBe(false);
    expect(isAllocationOf(allocationJobName(id, 1, tag).replace(/-a1$/, ''), id)).toBe(false);
  });
});
