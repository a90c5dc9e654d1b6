/** The deployment a worker's identity names (../src/queue-check.ts), as the start-up check reads pollers. */
import { describe, expect, it } from 'vitest';
import { deploymentOfIdentity, workerIdentity } from '../src/queue-check';

describe('worker identity names its deployment', () => {
  it('round-trips the tag, with or without a given base identity', () => {
    expect(deploymentOfIdentity(workerIdentity('team-a.3f9c1e'))).toBe('team-a.3f9c1e');
    expect(workerIdentity('t.1', '12@login1')).toBe('12@login1 infersweep-deployment=t.1');
    expect(deploymentOfIdentity('12@login1 infersweep-deployment=t.1')).toBe('t.1');
  });

  it('a worker that names no deployment (another program, an older worker) has none', () => {
    expect(deploymentOfIdentity('4242@host')).toBeUndefined();
    expect(deploymentOfIdentity('4242@host infersweep-deployment=')).toBeUndefined();
  });
});
