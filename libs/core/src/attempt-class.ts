/**
 * Why a failed attempt failed: one table of rules over what a failure carries (Slurm's job state,
 * the server's log tail, the error class and message, the client's errors), each rule with the
 * source its pattern comes from. Pure: the activity interceptor classifies a failure where its log
 * tail is (libs/orchestrator/src/activities/interceptor.ts) and the workflow reads the class back;
 * the workflow's decision follows from the class (libs/sweep/src/attempt-decision.ts).
 *
 * The classes are part of the one error taxonomy (./errors.ts `AttemptClass`): the error's `kind`
 * says how to retry a call, the attempt class says what broke.
 */
import type { AttemptClass, AttemptClassification } from './errors';

/** What a failed attempt carries, every field optional (an old history, a timeout without details). */
export interface AttemptEvidence {
  /** Slurm's job state when the allocation was lost (NODE_FAIL, OUT_OF_MEMORY, TIMEOUT, …) */
  jobState?: string;
  /** Slurm's reason for it (squeue %r): a job still COMPLETING after its node failed says NodeDown */
  jobReason?: string;
  /** the error class name (ImageImportError, ClientProcessError, ServerLostError, …) */
  errorType?: string;
  /** the activity that failed (allocate, importImage, launchServer, waitReady, runPoint) */
  activity?: string;
  message?: string;
  /** the last lines of the server's (or the import's) log */
  logTail?: string;
  /** the node(s) the failure names, comma-separated as the error context carries them */
  node?: string;
}

/** Where a rule looks. */
export type RuleSource = 'job-state' | 'job-reason' | 'log' | 'error-type';

export interface AttemptRule {
  id: string;
  class: AttemptClass;
  source: RuleSource;
  /** a job state (exact), an error class name (exact) or a log/message line pattern */
  match: string | RegExp;
  /** the rule names the node(s) of the failure as the suspect (node health, NCCL, a node-local import) */
  implicatesNode: boolean;
  /** where the pattern comes from: a repository and path, or the Slurm state's documentation */
  source_ref: string;
}

/**
 * The rules, first match wins: Slurm's own verdict on the job first, then the log lines (the most
 * specific first: a GPU Xid before the CUDA error it causes, a CUDA OOM before the engine's death it
 * causes), then the error class, then unknown.
 */
export const ATTEMPT_RULES: readonly AttemptRule[] = [
  // ---- Slurm job states (sacct/squeue; the liveness watch carries the state, libs/slurm/src/liveness.ts)
  rule(
    'slurm-node-fail',
    'node-health',
    'job-state',
    'NODE_FAIL',
    true,
    'SchedMD/slurm: doc/man/man1/sacct.1 (JOB STATE CODES: NF NODE_FAIL)',
  ),
  rule(
    'slurm-boot-fail',
    'node-health',
    'job-state',
    'BOOT_FAIL',
    true,
    'SchedMD/slurm: doc/man/man1/sacct.1 (JOB STATE CODES: BF BOOT_FAIL)',
  ),
  rule(
    'slurm-reason-node-down',
    'node-health',
    'job-reason',
    'NodeDown',
    true,
    'SchedMD/slurm: src/common/slurm_protocol_defs.c (job_state_reason_string: FAIL_DOWN_NODE is "NodeDown", the reason of a job still COMPLETING after its node failed)',
  ),
  rule(
    'slurm-out-of-memory',
    'host-oom',
    'job-state',
    'OUT_OF_MEMORY',
    false,
    'SchedMD/slurm: doc/man/man1/sacct.1 (JOB STATE CODES: OOM OUT_OF_MEMORY)',
  ),
  rule(
    'slurm-timeout',
    'scheduler',
    'job-state',
    'TIMEOUT',
    false,
    'SchedMD/slurm: doc/man/man1/sacct.1 (JOB STATE CODES: TO TIMEOUT)',
  ),
  rule(
    'slurm-preempted',
    'scheduler',
    'job-state',
    'PREEMPTED',
    false,
    'SchedMD/slurm: doc/man/man1/sacct.1 (JOB STATE CODES: PR PREEMPTED)',
  ),
  rule(
    'slurm-deadline',
    'scheduler',
    'job-state',
    'DEADLINE',
    false,
    'SchedMD/slurm: doc/man/man1/sacct.1 (JOB STATE CODES: DL DEADLINE)',
  ),
  rule(
    'slurm-cancelled',
    'scheduler',
    'job-state',
    'CANCELLED',
    false,
    'SchedMD/slurm: doc/man/man1/sacct.1 (JOB STATE CODES: CA CANCELLED)',
  ),
  // ---- a program that never ran: the step's log already read (its "command not found" line is the cause, srun's
  // "task 0: Exited with exit code 127" below it the consequence)
  rule(
    'missing-program',
    'setup',
    'error-type',
    'SetupError',
    false,
    'libs/slurm/src/errors.ts SetupError (libs/slurm/src/parse.ts missingTool reads the log)',
  ),
  // ---- log lines: node health
  rule(
    'gpu-xid',
    'node-health',
    'log',
    /NVRM: Xid \([^)]*\): \d+/,
    true,
    'leptonai/gpud: components/accelerator/nvidia/xid/README.md (the driver\'s dmesg line "NVRM: Xid (PCI:0000:cb:00): 13, …", matched there as NVRM: Xid.*?: (\\d+),)',
  ),
  rule(
    'gpu-fallen-off-bus',
    'node-health',
    'log',
    /GPU has fallen off the bus/,
    true,
    'leptonai/gpud: components/accelerator/nvidia/xid/README.md (Xid 79, "GPU has fallen off the bus")',
  ),
  rule(
    'slurmstepd-node-failure',
    'node-health',
    'log',
    /\*\*\* (JOB|STEP) \S+ ON \S+ CANCELLED AT \S+ DUE TO NODE FAILURE/,
    true,
    'SchedMD/slurm: src/slurmd/slurmstepd/ (slurmstepd\'s "*** %s ON %s CANCELLED AT %s DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***")',
  ),
  // ---- log lines: memory
  rule(
    'cuda-oom',
    'cuda-oom',
    'log',
    /CUDA out of memory\. Tried to allocate|torch\.(cuda\.)?OutOfMemoryError/,
    false,
    'pytorch/pytorch: c10/cuda/CUDACachingAllocator.cpp ("CUDA out of memory. Tried to allocate")',
  ),
  rule(
    'cgroup-oom-kill',
    'host-oom',
    'log',
    /Detected \d+ oom[-_]kill events? in/,
    false,
    'SchedMD/slurm: src/plugins/task/cgroup/task_cgroup_memory.c ("Detected %lu oom_kill event%s in %ps")',
  ),
  // ---- log lines: NCCL / RDMA / peer memory
  rule(
    'nccl-remote-error',
    'nccl',
    'log',
    /remote process exited or there was a network error/,
    true,
    'NVIDIA/nccl: src/init.cc (ncclGetErrorString(ncclRemoteError))',
  ),
  rule(
    'nccl-ib-completion',
    'nccl',
    'log',
    /NET\/IB\S*: Got completion from peer/,
    true,
    'NVIDIA/nccl: src/transport/net_ib/p2p.cc ("NET/IB: Got completion from peer %s with status=…")',
  ),
  rule(
    'nccl-ibv',
    'nccl',
    'log',
    /Call to ibv_\w+ (failed|returned)/,
    true,
    'NVIDIA/nccl: src/misc/ibvwrap.cc ("Call to ibv_modify_qp failed"), src/include/ibvwrap.h ("Call to ibv_poll_cq() returned")',
  ),
  rule(
    'nccl-peermem',
    'nccl',
    'log',
    /nvidia[-_]peermem|nv_peer_mem/,
    true,
    'NVIDIA/nccl: src/transport/net_ib/gdr.cc (the nvidia_peermem / nv_peer_mem module check for GPU Direct RDMA)',
  ),
  rule(
    'nccl-system-error',
    'nccl',
    'log',
    /unhandled (system|cuda) error \(run with NCCL_DEBUG=INFO/,
    true,
    'NVIDIA/nccl: src/init.cc (ncclGetErrorString(ncclSystemError / ncclUnhandledCudaError))',
  ),
  rule(
    'nccl-warn',
    'nccl',
    'log',
    /NCCL WARN|NCCL error in: /,
    true,
    'NVIDIA/nccl: src/debug.cc ("NCCL WARN %s"); pytorch/pytorch: torch/csrc/distributed/c10d/NCCLUtils.hpp ("NCCL error in: ")',
  ),
  // ---- log lines: the image
  rule(
    'pyxis-import',
    'image',
    'log',
    /pyxis: (failed to import docker image|importer .* failed|child \d+ failed)/,
    true,
    'NVIDIA/pyxis: pyxis_slurmstepd.c ("pyxis: failed to import docker image: %s"), importer.c',
  ),
  rule(
    'enroot-registry',
    'image',
    'log',
    /\[ERROR\] (URL \S+ returned error code|Could not process JSON input|Invalid image reference)/,
    false,
    'NVIDIA/enroot: src/common.sh (common::curl "URL … returned error code"), src/docker.sh',
  ),
  // ---- log lines: DNS / network
  rule(
    'dns',
    'network',
    'log',
    /Temporary failure in name resolution|Name or service not known|getaddrinfo (EAI_AGAIN|ENOTFOUND)/,
    false,
    'bminor/glibc: sysdeps/posix/gai_strerror-strs.h (EAI_AGAIN "Temporary failure in name resolution", EAI_NONAME "Name or service not known")',
  ),
  rule(
    'network-refused',
    'network',
    'log',
    /Connection (refused|reset by peer|timed out)|ECONNREFUSED|ETIMEDOUT|EHOSTUNREACH/,
    false,
    "torvalds/linux: include/uapi/asm-generic/errno.h (ECONNREFUSED, ECONNRESET, ETIMEDOUT, EHOSTUNREACH; strerror's text of each)",
  ),
  // ---- log lines: the engine's own death (after the causes above)
  rule(
    'vllm-engine-dead',
    'engine-crash',
    'log',
    /EngineCore (encountered a fatal error|failed to start)|Engine core initialization failed|EngineDeadError/,
    true,
    'vllm-project/vllm: vllm/v1/engine/core.py ("EngineCore encountered a fatal error."), vllm/v1/engine/utils.py ("Engine core initialization failed")',
  ),
  rule(
    'srun-task-exit',
    'engine-crash',
    'log',
    /task \d+: (Exited with exit code \d+|Killed|Segmentation fault|Aborted|Bus error)/,
    true,
    'SchedMD/slurm: src/plugins/launch/slurm/launch_slurm.c ("%s: task %s: Exited with exit code %d", the signal\'s name)',
  ),
  // ---- a point's own verdict: a "success" with no output (NVIDIA/srt-slurm#429 counted one as a success)
  rule(
    'zero-output-tokens',
    'zero-output',
    'log',
    /zero_output_tokens: /,
    false,
    "libs/agentx/src/metrics/validity.ts (the zero_output_tokens gate over the requests' osl)",
  ),
  // ---- error classes (this repository's own taxonomy)
  rule(
    'image-import-error',
    'image',
    'error-type',
    'ImageImportError',
    false,
    'libs/slurm/src/errors.ts ImageImportError',
  ),
  rule(
    'image-lock-timeout',
    'image',
    'error-type',
    'ImageLockTimeout',
    false,
    'libs/slurm/src/errors.ts ImageLockTimeout',
  ),
  rule(
    'ssh-connection',
    'network',
    'error-type',
    'SshConnectionError',
    false,
    'libs/slurm/src/errors.ts SshConnectionError',
  ),
  rule(
    'client-process',
    'client',
    'error-type',
    'ClientProcessError',
    false,
    'libs/agentx/src/errors.ts ClientProcessError',
  ),
  rule('aiperf', 'client', 'error-type', 'AiperfError', false, 'libs/agentx/src/errors.ts AiperfError'),
  rule('trace-format', 'client', 'error-type', 'TraceFormatError', false, 'libs/agentx/src/errors.ts TraceFormatError'),
  rule(
    'server-lost',
    'engine-crash',
    'error-type',
    'ServerLostError',
    true,
    'libs/orchestrator/src/activities/errors.ts ServerLostError (a server step exited; no log line said why)',
  ),
];

function rule(
  id: string,
  cls: AttemptClass,
  source: RuleSource,
  match: string | RegExp,
  implicatesNode: boolean,
  source_ref: string,
): AttemptRule {
  return { id, class: cls, source, match, implicatesNode, source_ref };
}

/** Classify a failed attempt by {@link ATTEMPT_RULES}; `unknown` when no rule matches. */
export function classifyAttempt(e: AttemptEvidence): AttemptClassification {
  const text = [e.logTail, e.message].filter((x): x is string => typeof x === 'string' && x !== '').join('\n');
  for (const r of ATTEMPT_RULES) {
    const evidence = matchRule(r, e, text);
    if (evidence === undefined) continue;
    return { class: r.class, rule: r.id, evidence, nodes: r.implicatesNode ? nodesOf(e.node) : [] };
  }
  return { class: 'unknown', rule: 'unknown', nodes: [] };
}

function matchRule(r: AttemptRule, e: AttemptEvidence, text: string): string | undefined {
  if (r.source === 'job-state') return e.jobState === r.match ? r.match : undefined;
  if (r.source === 'job-reason') return e.jobReason === r.match ? `${e.jobState ?? '?'} (${r.match})` : undefined;
  if (r.source === 'error-type') return e.errorType === r.match ? r.match : undefined;
  const re = r.match as RegExp;
  const line = text.split('\n').find((l) => re.test(l));
  return line === undefined ? undefined : line.trim().slice(0, 300);
}

function nodesOf(node: string | undefined): string[] {
  return (node ?? '')
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');
}

/** Slurm's compact states of a node it does not trust (sinfo %t: `down*`, `drain`, `fail`, `boot`, a `*` not responding). */
const UNHEALTHY_NODE_STATE = /^(down|drain|drng|fail|failg|boot|maint|inval|npc|unk)|\*$/;

/**
 * Which nodes a failure of class `cls` implicates, given Slurm's node states: for a node failure, the nodes Slurm
 * itself holds unhealthy (DOWN, DRAINED, not responding) among the failure's nodes and its allocation's. The
 * allocation's count because a loss read from a COMPLETING job names only the nodes still completing, the healthy
 * ones (squeue's %N), never the node that failed. When Slurm names none (it recovered, or a log line named the
 * node), or for any other class, every node the failure named.
 */
export function suspectNodes(
  named: readonly string[],
  allocationNodes: readonly string[],
  cls: AttemptClass,
  states: readonly { node: string; state: string }[],
): string[] {
  const candidates = [...new Set([...named, ...allocationNodes])];
  if (cls !== 'node-health' || candidates.length < 2) return [...named];
  const bad = candidates.filter((n) => states.some((s) => s.node === n && UNHEALTHY_NODE_STATE.test(s.state)));
  return bad.length > 0 ? bad : [...named];
}
