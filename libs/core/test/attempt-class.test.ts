import { describe, expect, it } from 'vitest';
import { ATTEMPT_CLASSES, ATTEMPT_RULES, classifyAttempt, suspectNodes, type AttemptEvidence } from '../src';

/**
 * One real-format example per rule (the line as the engine, library or Slurm prints it), and the
 * class and node verdict it must get. A rule without an example fails the coverage test below.
 */
const EXAMPLES: Record<string, { e: AttemptEvidence; nodes?: string[] }> = {
  'slurm-node-fail': { e: { jobState: 'NODE_FAIL', node: 'node1,node2' }, nodes: ['node1', 'node2'] },
  'slurm-boot-fail': { e: { jobState: 'BOOT_FAIL', node: 'node3' }, nodes: ['node3'] },
  'slurm-reason-node-down': {
    e: { jobState: 'COMPLETING', jobReason: 'NodeDown', node: 'node3,node4' },
    nodes: ['node3', 'node4'],
  },
  'slurm-out-of-memory': { e: { jobState: 'OUT_OF_MEMORY', node: 'node1' } },
  'slurm-timeout': { e: { jobState: 'TIMEOUT', node: 'node1' } },
  'slurm-preempted': { e: { jobState: 'PREEMPTED' } },
  'slurm-deadline': { e: { jobState: 'DEADLINE' } },
  'slurm-cancelled': { e: { jobState: 'CANCELLED' } },
  'gpu-xid': {
    e: {
      node: 'node2',
      logTail:
        "[Fri Aug 30 11:43:09 2024] NVRM: Xid (PCI:0000:cb:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Warp Exception on (GPC 7, TPC 1, SM 0)",
    },
    nodes: ['node2'],
  },
  'gpu-fallen-off-bus': {
    e: { node: 'node2', logTail: 'NVRM: GPU 0000:91:00.0: GPU has fallen off the bus.' },
    nodes: ['node2'],
  },
  'slurmstepd-node-failure': {
    e: {
      node: 'node4',
      logTail:
        'slurmstepd: error: *** STEP 1234.0 ON node4 CANCELLED AT 2026-12-05T07:01:02 DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***',
    },
    nodes: ['node4'],
  },
  'cuda-oom': {
    e: {
      node: 'node1',
      logTail:
        '(EngineCore_DP0 pid=413) ERROR 11-10 12:30:57 [core.py:710] EngineCore encountered a fatal error.\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.22 GiB. GPU 0 has a total capacity of 79.11 GiB of which 512.00 MiB is free.',
    },
  },
  'cgroup-oom-kill': {
    e: {
      logTail:
        'slurmstepd: error: Detected 1 oom_kill event in StepId=22035606.1. Some of the step tasks have been OOM Killed.',
    },
  },
  'nccl-remote-error': {
    e: {
      node: 'node2',
      logTail:
        'torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:268, remote process exited or there was a network error, NCCL version 2.21.5',
    },
    nodes: ['node2'],
  },
  'nccl-ib-completion': {
    e: {
      node: 'node3',
      logTail:
        'node3:1234:1290 [0] transport/net_ib.cc:1696 NCCL WARN NET/IB: Got completion from peer 10.0.0.4<50142> with status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_SEND(0) vendor_err=129',
    },
    nodes: ['node3'],
  },
  'nccl-ibv': {
    e: {
      node: 'node1',
      logTail: 'NCCL WARN Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx5_0:1',
    },
    nodes: ['node1'],
  },
  'nccl-peermem': {
    e: {
      node: 'node1',
      logTail:
        'nvidia-peermem nv_get_p2p_free_callback:127 ERROR detected invalid context, skipping further processing',
    },
    nodes: ['node1'],
  },
  'nccl-system-error': {
    e: { node: 'node2', logTail: 'RuntimeError: unhandled system error (run with NCCL_DEBUG=INFO for details)' },
    nodes: ['node2'],
  },
  'nccl-warn': {
    e: {
      node: 'node2',
      logTail:
        'node2:77:91 [3] misc/socket.cc:58 NCCL WARN socketProgress: Connection closed by remote peer node1<39012>',
    },
    nodes: ['node2'],
  },
  'pyxis-import': {
    e: {
      node: 'node1',
      logTail:
        'pyxis: importing docker image: nvcr.io#nvidia/vllm:25.01\nslurmstepd: error: pyxis: failed to import docker image: nvcr.io#nvidia/vllm:25.01',
    },
    nodes: ['node1'],
  },
  'enroot-registry': {
    e: {
      logTail:
        '[ERROR] URL https://nvcr.io/proxy_auth?scope=repository:nvidia/vllm:pull returned error code: 401 Unauthorized',
    },
  },
  dns: {
    e: {
      logTail:
        "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='huggingface.co'): [Errno -3] Temporary failure in name resolution",
    },
  },
  'network-refused': {
    e: { message: 'connect ECONNREFUSED 127.0.0.1:2228', errorType: 'CommandFailedError' },
  },
  'vllm-engine-dead': {
    e: {
      node: 'node1',
      logTail: '(EngineCore_0 pid=2651) ERROR 06-11 11:46:39 [core.py:517] EngineCore encountered a fatal error.',
    },
    nodes: ['node1'],
  },
  'srun-task-exit': {
    e: { node: 'node2', logTail: 'srun: error: node2: task 0: Exited with exit code 1' },
    nodes: ['node2'],
  },
  'zero-output-tokens': {
    e: { message: 'client_saturated: x\nzero_output_tokens: 40 successful requests returned 0 output tokens' },
  },
  'missing-program': {
    e: {
      errorType: 'SetupError',
      node: 'node1',
      message:
        "step infersweep-s1-r0 on node1 failed to start: `vllm` was not found on the cluster; install it or put it on the login user's PATH",
      logTail: 'bash: line 1: vllm: command not found\nsrun: error: node1: task 0: Exited with exit code 127',
    },
  },
  'image-import-error': { e: { errorType: 'ImageImportError', message: 'enroot import exited 1' } },
  'image-lock-timeout': { e: { errorType: 'ImageLockTimeout', message: 'lock not acquired within 600 s' } },
  'ssh-connection': { e: { errorType: 'SshConnectionError', message: 'ssh dropped' } },
  'client-process': { e: { errorType: 'ClientProcessError', message: 'the client process exited 1' } },
  aiperf: { e: { errorType: 'AiperfError', message: 'aiperf exited 2' } },
  'trace-format': { e: { errorType: 'TraceFormatError', message: 'trace line 3 is not JSON' } },
  'server-lost': {
    e: {
      errorType: 'ServerLostError',
      node: 'node1',
      message: 'server step infersweep-s1-r0 on node1 (rank 0) gone during the point',
      logTail: 'INFO started',
    },
    nodes: ['node1'],
  },
};

describe('classifyAttempt: one table, one test per rule', () => {
  it.each(ATTEMPT_RULES.map((r) => [r.id, r] as const))('rule %s classifies its real-format example', (id, r) => {
    const ex = EXAMPLES[id];
    expect(ex, `rule ${id} needs an example in EXAMPLES`).toBeDefined();
    const c = classifyAttempt(ex!.e);
    expect(c).toMatchObject({ class: r.class, rule: id });
    expect(c.nodes).toEqual(ex!.nodes ?? []);
    expect(c.evidence).toBeTruthy();
  });

  it('every rule cites where its pattern comes from as a repository path, never a local path', () => {
    for (const r of ATTEMPT_RULES) {
      expect(r.source_ref).toMatch(/^([\w.-]+\/[\w.-]+: \S|libs\/)/);
      expect(r.source_ref).not.toMatch(/\/work\/|\.\.\//);
    }
  });

  it('a failure no rule knows is unknown, implicating no node', () => {
    expect(classifyAttempt({ message: 'something odd', node: 'node1', logTail: 'INFO all fine' })).toEqual({
      class: 'unknown',
      rule: 'unknown',
      nodes: [],
    });
    expect(classifyAttempt({})).toMatchObject({ class: 'unknown' });
  });

  it("Slurm's verdict wins over log lines: a NODE_FAIL whose log shows a CUDA OOM is node health", () => {
    expect(
      classifyAttempt({
        jobState: 'NODE_FAIL',
        node: 'node1',
        logTail: 'CUDA out of memory. Tried to allocate 2.00 GiB',
      }),
    ).toMatchObject({ class: 'node-health', nodes: ['node1'] });
  });

  it('the cause wins over its consequence: a CUDA OOM that killed the engine is cuda-oom, an Xid before the NCCL error is node health', () => {
    const oom = classifyAttempt({
      errorType: 'ServerLostError',
      logTail:
        'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 GiB\nEngineCore encountered a fatal error.\nsrun: error: node1: task 0: Exited with exit code 1',
    });
    expect(oom).toMatchObject({ class: 'cuda-oom', rule: 'cuda-oom' });
    const xid = classifyAttempt({
      node: 'node2',
      logTail:
        "NCCL WARN Cuda failure 'unspecified launch failure'\nNVRM: Xid (PCI:0000:91:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
    });
    expect(xid).toMatchObject({ class: 'node-health', rule: 'gpu-xid', nodes: ['node2'] });
  });

  it("a missing program is set-up, not the engine crash srun's exit code 127 below its line would say", () => {
    expect(classifyAttempt(EXAMPLES['missing-program']!.e)).toMatchObject({ class: 'setup', nodes: [] });
    const { errorType: _, ...asLogOnly } = EXAMPLES['missing-program']!.e;
    expect(classifyAttempt(asLogOnly)).toMatchObject({ class: 'engine-crash', rule: 'srun-task-exit' });
  });

  it('every class but unknown is reachable from some rule', () => {
    const reached = new Set(ATTEMPT_RULES.map((r) => r.class));
    expect(ATTEMPT_CLASSES.filter((c) => !reached.has(c))).toEqual(['unknown']);
  });
});

describe('suspectNodes: which nodes a failure implicates', () => {
  const states = [
    { node: 'node1', state: 'comp' },
    { node: 'node2', state: 'down*' },
    { node: 'node3', state: 'idle' },
  ];

  it("a node failure read from a COMPLETING job (it names only the healthy node still completing) implicates the allocation's down node", () => {
    expect(suspectNodes(['node1'], ['node1', 'node2'], 'node-health', states)).toEqual(['node2']);
  });

  it('a node failure naming both nodes implicates the one Slurm holds unhealthy', () => {
    expect(suspectNodes(['node1', 'node2'], [], 'node-health', states)).toEqual(['node2']);
  });

  it('when Slurm holds none unhealthy (it recovered, or a log line named the node): the named nodes', () => {
    const healthy = states.map((s) => ({ ...s, state: 'alloc' }));
    expect(suspectNodes(['node1'], ['node1', 'node2'], 'node-health', healthy)).toEqual(['node1']);
    expect(suspectNodes(['node3'], [], 'node-health', states)).toEqual(['node3']);
  });

  it('another class implicates the named nodes whatever Slurm says of the others', () => {
    expect(suspectNodes(['node1'], ['node1', 'node2'], 'nccl', states)).toEqual(['node1']);
  });
});
