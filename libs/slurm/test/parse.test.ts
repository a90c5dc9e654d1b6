import { describe, expect, it } from 'vitest';
import {
  fitsInTime,
  importErrorIsMissingImage,
  isLive,
  parseDuration,
  parseHostnames,
  parseJobLine,
  parseJobLines,
  parseNodeAddresses,
  parseSalloc,
  parseStepLines,
  parseTail,
  pendingReasonIsPermanent,
  sallocIsPermanent,
} from '../src/index';

describe('parsers (outputs as recorded in REPORT.md)', () => {
  it('salloc stderr: id only on stderr, pending then granted', () => {
    expect(parseSalloc('salloc: Granted job allocation 1\n')).toEqual({ jobId: '1', granted: true });
    expect(parseSalloc('salloc: Pending job allocation 7\nsalloc: job 7 queued and waiting for resources\n')).toEqual({
      jobId: '7',
      granted: false,
    });
    expect(
      parseSalloc(
        'salloc: Pending job allocation 7\nsalloc: job 7 has been allocated resources\nsalloc: Granted job allocation 7\n',
      ),
    ).toEqual({ jobId: '7', granted: true });
    expect(parseSalloc('salloc: error: Unable to allocate resources: Connection timed out\n')).toEqual({
      jobId: null,
      granted: false,
    });
    expect(parseSalloc('')).toEqual({ jobId: null, granted: false });
  });

  it('permanent salloc failures are recognised', () => {
    expect(
      sallocIsPermanent('salloc: error: Job submit/allocate failed: Requested node configuration is not available'),
    ).toBe(true);
    expect(sallocIsPermanent("salloc: unrecognized option '--parsable'")).toBe(true);
    expect(sallocIsPermanent('salloc: error: Unable to allocate resources: Connection timed out')).toBe(false);
  });

  it('squeue job lines, including names with | and empty node lists', () => {
    expect(parseJobLine('12|RUNNING|None|node[1-2]|4:59|2026-12-02T16:47:14|infersweep-x')).toEqual({
      jobId: '12',
      state: 'RUNNING',
      reason: 'None',
      nodeList: 'node[1-2]',
      timeLeftSeconds: 299,
      endTime: '2026-12-02T16:47:14',
      name: 'infersweep-x',
    });
    const p = parseJobLine('3|PENDING|PartitionNodeLimit||5:00|N/A|a|b c');
    expect(p.nodeList).toBe('');
    expect(p.endTime).toBeNull();
    expect(p.name).toBe('a|b c');
    expect(parseJobLine('4|TIMEOUT|TimeLimit|node3|INVALID|2026-12-02T16:47:14|n').timeLeftSeconds).toBeNull();
    expect(
      parseJobLines('1|CANCELLED|None|node1|0:00|N/A|a\n\n2|NODE_FAIL|NodeDown|node4|0:00|N/A|b\n').map((j) => j.state),
    ).toEqual(['CANCELLED', 'NODE_FAIL']);
    expect(() => parseJobLine('garbage')).toThrow();
    expect(() => parseJobLine('x|RUNNING|None|n|1:00|N/A|n')).toThrow();
  });

  it('time left formats', () => {
    expect(parseDuration('5:00')).toBe(300);
    expect(parseDuration('1:02:03')).toBe(3723);
    expect(parseDuration('2-01:00:00')).toBe(2 * 86400 + 3600);
    expect(parseDuration('1-02')).toBe(86400 + 7200);
    expect(parseDuration('1-02:30')).toBe(86400 + 7200 + 1800);
    expect(parseDuration('30')).toBe(1800);
    for (const t of ['UNLIMITED', 'INVALID', 'NOT_SET', 'N/A', '']) expect(parseDuration(t)).toBeNull();
  });

  it('PREEMPTED / requeued are not terminal; TIMEOUT, NODE_FAIL, GONE are', () => {
    for (const s of ['PENDING', 'RUNNING', 'COMPLETING', 'PREEMPTED', 'REQUEUED', 'SUSPENDED', 'CONFIGURING'] as const)
      expect(isLive(s)).toBe(true);
    for (const s of ['COMPLETED', 'CANCELLED', 'TIMEOUT', 'NODE_FAIL', 'FAILED', 'GONE', 'OUT_OF_MEMORY'] as const)
      expect(isLive(s)).toBe(false);
  });

  it('steps, hostnames, node addresses, tails', () => {
    expect(parseStepLines('1.0|node1|infersweep-step-a\n1.1|node2|x|y\n')).toEqual([
      { stepId: '1.0', node: 'node1', name: 'infersweep-step-a' },
      { stepId: '1.1', node: 'node2', name: 'x|y' },
    ]);
    expect(parseHostnames('node1\nnode2\n')).toEqual(['node1', 'node2']);
    expect(
      parseNodeAddresses(
        'NodeName=node1 Arch=x86_64 NodeAddr=127.0.0.1 NodeHostName=vm\nNodeName=node2 NodeAddr=10.0.0.2\n',
      ),
    ).toEqual({ node1: '127.0.0.1', node2: '10.0.0.2' });
    expect(parseTail('missing\n')).toEqual({ exists: false, bytes: 0, tail: '' });
    expect(parseTail('12\nhello\nworld\n')).toEqual({ exists: true, bytes: 12, tail: 'hello\nworld\n' });
    expect(() => parseTail('what')).toThrow();
  });

  it('time guard', () => {
    expect(fitsInTime(600, 500, 60)).toBe(true);
    expect(fitsInTime(600, 550, 60)).toBe(false);
    expect(fitsInTime(null, 1, 0)).toBe(false);
  });

  it('missing-image classification', () => {
    expect(
      importErrorIsMissingImage(
        '[ERROR] URL https://registry-1.docker.io/v2/x/manifests/y returned error code: 404 Not Found',
      ),
    ).toBe(true);
    expect(importErrorIsMissingImage('curl: (28) Connection timed out')).toBe(false);
  });
});

describe('pendingReasonIsPermanent', () => {
  it('limits a job can never fit vs reasons that pass with time', () => {
    for (const r of [
      'PartitionNodeLimit',
      'PartitionTimeLimit',
      'QOSMaxNodePerJobLimit',
      'AssocMaxWallDurationPerJobLimit',
      'BadConstraints',
      'InvalidAccount',
    ])
      expect(pendingReasonIsPermanent(r)).toBe(true);
    for (const r of [
      'Resources',
      'Priority',
      'ReqNodeNotAvail',
      'QOSMaxJobsPerUserLimit',
      'AssocGrpGRES',
      'None',
      'BeginTime',
    ])
      expect(pendingReasonIsPermanent(r)).toBe(false);
  });
});
