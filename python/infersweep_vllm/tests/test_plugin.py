"""Tests of the vLLM CPU plugin (src/infersweep_vllm/plugin.py) against the real torch/gloo and vLLM's
real CPU fused-MoE kernel. Run with the vLLM venv's python: tests/run.py (what test/vllm-plugin.int.test.ts
does) or `python -m unittest discover -s python/infersweep_vllm/tests`."""

from __future__ import annotations

import io
import multiprocessing as mp
import os
import socket
import traceback
import unittest

import torch

from infersweep_vllm.plugin import all_gatherv, map_experts, reduce_scatterv


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _collective_worker(rank: int, world: int, port: int, queue) -> None:
    """One gloo rank: runs every collective case and reports its results (or its traceback)."""
    try:
        import torch.distributed as dist

        os.environ["GLOO_SOCKET_IFNAME"] = "lo"
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
        g = dist.new_group(list(range(world)), backend="gloo")
        sizes = [3, 1]  # uneven, as DP ranks with different batch sizes
        n = sizes[rank]
        out = {}
        base = torch.arange(n * 4, dtype=torch.float32).reshape(n, 4) + 100 * rank
        for name, dtype in [("bf16", torch.bfloat16), ("f32", torch.float32), ("i16", torch.int16), ("i32", torch.int32)]:
            out[f"ag_{name}"] = all_gatherv(base.to(dtype), g, rank, world, 0, sizes)
        out["ag_bool"] = all_gatherv(torch.full((n, 2), rank == 0), g, rank, world, 0, sizes)
        out["ag_list"] = all_gatherv([base, base[:, 0].long()], g, rank, world, 0, sizes)
        out["ag_equal"] = all_gatherv(torch.full((2, 3), float(rank)), g, rank, world, 0, None)
        total = sum(sizes)
        full = (torch.arange(total * 2, dtype=torch.float32).reshape(total, 2) * (rank + 1)).to(torch.bfloat16)
        out["rs"] = reduce_scatterv(full, g, rank, world, 0, sizes)
        out["rs_equal"] = reduce_scatterv(torch.ones(4, 3) * (rank + 1), g, rank, world, 0, None)
        buf = io.BytesIO()
        torch.save(out, buf)  # plain bytes: tensors shared by fd would die with this process
        queue.put((rank, buf.getvalue(), None))
        dist.destroy_process_group()
    except Exception:  # reported to the parent, which fails the test with it
        queue.put((rank, None, traceback.format_exc()))


class CollectivesTest(unittest.TestCase):
    """all_gatherv / reduce_scatterv on two real gloo ranks (processes) over loopback."""

    @classmethod
    def setUpClass(cls) -> None:
        ctx = mp.get_context("spawn")
        queue = ctx.Queue()
        port = _free_port()
        procs = [ctx.Process(target=_collective_worker, args=(r, 2, port, queue)) for r in range(2)]
        for p in procs:
            p.start()
        cls.results = {}
        for _ in procs:
            rank, out, err = queue.get(timeout=120)
            if err:
                raise AssertionError(f"rank {rank} failed:\n{err}")
            cls.results[rank] = torch.load(io.BytesIO(out))
        for p in procs:
            p.join(timeout=30)

    def expected_gather(self) -> torch.Tensor:
        r0 = torch.arange(12, dtype=torch.float32).reshape(3, 4)
        r1 = torch.arange(4, dtype=torch.float32).reshape(1, 4) + 100
        return torch.cat([r0, r1])

    def test_all_gatherv_uneven_sizes_every_dtype(self) -> None:
        want = self.expected_gather()
        for rank in (0, 1):
            got = self.results[rank]
            for name, dtype in [("bf16", torch.bfloat16), ("f32", torch.float32), ("i16", torch.int16), ("i32", torch.int32)]:
                t = got[f"ag_{name}"]
                self.assertEqual(t.dtype, dtype, name)
                self.assertEqual(tuple(t.shape), (4, 4), name)
                self.assertTrue(torch.equal(t, want.to(dtype)), f"{name} on rank {rank}: {t}")
            b = got["ag_bool"]
            self.assertEqual(b.dtype, torch.bool)
            self.assertEqual(b[:, 0].tolist(), [True, True, True, False])

    def test_all_gatherv_list_and_equal_sizes(self) -> None:
        want = self.expected_gather()
        for rank in (0, 1):
            a, b = self.results[rank]["ag_list"]
            self.assertTrue(torch.equal(a, want))
            self.assertEqual(b.dtype, torch.int64)
            self.assertEqual(b.tolist(), want[:, 0].long().tolist())
            eq = self.results[rank]["ag_equal"]
            self.assertEqual(eq[:, 0].tolist(), [0.0, 0.0, 1.0, 1.0])

    def test_reduce_scatterv_sums_and_slices_by_sizes(self) -> None:
        total = torch.arange(8, dtype=torch.float32).reshape(4, 2) * 3  # rank0 ×1 + rank1 ×2
        r0, r1 = self.results[0]["rs"], self.results[1]["rs"]
        self.assertEqual(r0.dtype, torch.bfloat16)
        self.assertEqual(tuple(r0.shape), (3, 2))
        self.assertEqual(tuple(r1.shape), (1, 2))
        self.assertTrue(torch.equal(r0.float(), total[:3]))
        self.assertTrue(torch.equal(r1.float(), total[3:]))
        self.assertTrue(torch.equal(self.results[1]["rs_equal"], torch.full((2, 3), 3.0)))


class ExpertMapTest(unittest.TestCase):
    def test_map_experts_zeroes_remote_experts(self) -> None:
        expert_map = torch.tensor([-1, -1, -1, -1, 0, 1, 2, 3], dtype=torch.int32)  # rank 1 of EP=2
        ids = torch.tensor([[0, 5], [7, 4], [2, 3]], dtype=torch.int32)
        weights = torch.tensor([[0.6, 0.4], [0.7, 0.3], [0.5, 0.5]])
        local, w = map_experts(ids, weights, expert_map)
        self.assertEqual(local.dtype, torch.int32)
        self.assertEqual(local.tolist(), [[0, 1], [3, 0], [0, 0]])
        self.assertTrue(torch.allclose(w, torch.tensor([[0.0, 0.4], [0.7, 0.3], [0.0, 0.0]])))

    def test_ep_ranks_sum_to_the_full_layer_on_vllms_cpu_kernel(self) -> None:
        """Two EP ranks holding 4 of 8 experts each, ids mapped by the plugin, add up (as the
        reduce-scatter does) to one rank holding all 8: vLLM's real cpu_fused_moe kernel."""
        from vllm._custom_ops import cpu_fused_moe, cpu_prepack_moe_weight

        torch.manual_seed(0)
        E, H, I, T, K = 8, 128, 64, 5, 2
        w13 = (torch.randn(E, 2 * I, H) / H**0.5).to(torch.bfloat16)
        w2 = (torch.randn(E, H, I) / I**0.5).to(torch.bfloat16)
        x = torch.randn(T, H).to(torch.bfloat16)
        logits = torch.randn(T, E)
        weights, ids = torch.topk(torch.softmax(logits, dim=-1), K)
        ids = ids.to(torch.int32)
        weights = weights.float()

        def run(w13_, w2_, ids_, weights_):
            out = torch.zeros(T, H, dtype=torch.bfloat16)
            cpu_fused_moe(out, x, cpu_prepack_moe_weight(w13_, "vec"), cpu_prepack_moe_weight(w2_, "vec"), None, None, weights_, ids_, "silu", "vec")
            return out.float()

        full = run(w13, w2, ids, weights)
        parts = []
        for r in range(2):
            expert_map = torch.full((E,), -1, dtype=torch.int32)
            expert_map[r * 4 : (r + 1) * 4] = torch.arange(4, dtype=torch.int32)
            local_ids, local_w = map_experts(ids, weights, expert_map)
            self.assertTrue(int(local_ids.max()) < 4)
            parts.append(run(w13[r * 4 : (r + 1) * 4].contiguous(), w2[r * 4 : (r + 1) * 4].contiguous(), local_ids, local_w))
        self.assertGreater(float(full.abs().max()), 0.01)
        self.assertTrue(torch.allclose(parts[0] + parts[1], full, atol=0.03, rtol=0.03), f"max diff {(parts[0] + parts[1] - full).abs().max()}")


class RegistrationTest(unittest.TestCase):
    def test_entry_point_is_installed(self) -> None:
        from importlib.metadata import entry_points

        names = {ep.name: ep.value for ep in entry_points(group="vllm.general_plugins")}
        self.assertEqual(names.get("infersweep_cpu_moe"), "infersweep_vllm.plugin:register")

    def test_register_patches_the_cpu_communicator_and_experts(self) -> None:
        from vllm.distributed.device_communicators.base_device_communicator import DeviceCommunicatorBase
        from vllm.distributed.device_communicators.cpu_communicator import CpuCommunicator
        from vllm.model_executor.layers.fused_moe.experts.cpu_moe import CPUUnquantizedExperts
        from vllm.platforms import current_platform

        from infersweep_vllm import plugin

        self.assertTrue(current_platform.is_cpu(), "vLLM must detect the CPU platform (dist-info shim)")
        self.assertIs(CpuCommunicator.all_gatherv, DeviceCommunicatorBase.all_gatherv)  # as shipped: raises
        plugin.register()
        self.assertIsNot(CpuCommunicator.all_gatherv, DeviceCommunicatorBase.all_gatherv)
        self.assertIsNot(CpuCommunicator.reduce_scatterv, DeviceCommunicatorBase.reduce_scatterv)
        self.assertTrue(getattr(CPUUnquantizedExperts.apply, "_infersweep", False))


if __name__ == "__main__":
    unittest.main()
