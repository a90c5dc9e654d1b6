import { describe, expect, it } from 'vitest';
import { allocationJobName, deploymentJobPrefix, deploymentTag, JOB_NAME_PREFIX } from '../src/index';

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

  it('job names of a deployment start with its prefix; names of another deployment or untagged ones do not', () => {
    const mine = deploymentTag('default', 'a');
    const theirs = deploymentTag('default', 'b');
    const name = allocationJobName('sweep-cfg-balanced-h200-x', 2, mine);
    expect(name.startsWith(deploymentJobPrefix(mine))).toBe(true);
    expect(name).toMatch(/-a2$/);
    expect(allocationJobName('sweep-cfg-balanced-h200-x', 2, theirs).startsWith(deploymentJobPrefix(mine))).toBe(false);
    // untagged (sweeps started before tags) keep their old names, so their replays are unchanged
    expect(allocationJobName('sweep-cfg-balanced-h200-x', 2)).toBe(
      `${JOB_NAME_PREFIX}cfg-balanced-h200-x-${name.split('-').slice(-2, -1)[0]}-a2`,
    );
    expect(name.length).toBeLessThanOrEqual(200);
  });
});
