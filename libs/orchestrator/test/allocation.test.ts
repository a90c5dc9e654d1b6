import { describe, expect, it } from 'vitest';
import { waitedBefore } from '../src/activities/allocation';

describe('allocate: queue age across a retried attempt', () => {
  const jobName = 'infersweep-kimik3-latency-h200-abc-a1';

  it("reads the wait from the earlier attempt's last heartbeat for the same job name", () => {
    expect(waitedBefore({ phase: 'allocating', jobName, jobId: '42', state: 'PENDING', waitedSeconds: 5400 }, jobName)).toBe(5400);
  });

  it('starts from zero without a heartbeat, for another job name, or for a value that is not a positive number', () => {
    expect(waitedBefore(undefined, jobName)).toBe(0);
    expect(waitedBefore(null, jobName)).toBe(0);
    expect(waitedBefore('5400', jobName)).toBe(0);
    expect(waitedBefore({ jobName: `${jobName.slice(0, -1)}2`, waitedSeconds: 5400 }, jobName)).toBe(0);
    expect(waitedBefore({ jobName, waitedSeconds: '5400' }, jobName)).toBe(0);
    expect(waitedBefore({ jobName, waitedSeconds: Number.NaN }, jobName)).toBe(0);
    expect(waitedBefore({ jobName, waitedSeconds: -3 }, jobName)).toBe(0);
  });
});
