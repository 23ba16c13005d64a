"""snippets/data_vs_model_parallelism/mesh_2d.py, run exactly as docs/data-vs-model-parallelism.md says."""
from __future__ import annotations

import ast

import pytest
import torch
from torch import nn
from conftest import bare_run_test, import_program
from torchjob import JobResult
from .lesson import FOLDER, TOL, _lines, _run

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("data_vs_model_parallelism/mesh_2d.py")]


MESH = FOLDER / "mesh_2d.py"
mesh = import_program(MESH)
WORLD = 4
NAMES = ["up.weight", "up.bias", "down.weight", "down.bias"]  # the optimizer's order
FSDP_TP_PLACEMENTS = {
    "up.weight": "(_StridedShard(dim=0, sf=2), Shard(dim=0))",
    "up.bias": "(_StridedShard(dim=0, sf=2), Shard(dim=0))",
    "down.weight": "(Shard(dim=0), Shard(dim=1))",
    "down.bias": "(Shard(dim=0), Replicate())",
}


@pytest.fixture(scope="module")
def mesh_job(tmp_path_factory, pytestconfig) -> JobResult:
    return _run(MESH, tmp_path_factory, pytestconfig, exact_world_size=WORLD)


def _block(state: dict[str, torch.Tensor]) -> nn.Module:
    block = mesh.Block()
    block.load_state_dict(state)
    return block


def _fsdp_tp_slice(name: str, full: torch.Tensor, rank: int) -> torch.Tensor:
    """What rank (dp, tp) = divmod(rank, 2) should hold of a full tensor: tensor
    parallelism splits it over tp (rows of up, columns of down), then FSDP splits that
    tp shard's rows over dp."""
    dp, tp = divmod(rank, 2)
    if name.startswith("up."):
        return full.chunk(2, dim=0)[tp].chunk(2, dim=0)[dp]
    if name == "down.weight":
        return full.chunk(2, dim=1)[tp].chunk(2, dim=0)[dp]
    return full.chunk(2, dim=0)[dp]  # down.bias: replicated over tp


def _hsdp_slice(full: torch.Tensor, rank: int) -> torch.Tensor:
    """What rank (replicate, shard) = divmod(rank, 2) should hold: the shard-th block of
    rows; the two replicate groups hold the same."""
    return full.chunk(2, dim=0)[rank % 2]


def _printed_losses(job: JobResult, prefix: str) -> list[float]:
    line = next(l for l in _lines(job, 0) if l.startswith(prefix))
    return ast.literal_eval(line.removeprefix(prefix))


class TestMesh2D:
    def test_mesh_layout(self, mesh_job):
        # consecutive ranks (one machine's GPUs under torchrun) form a tp group
        assert "ranks by place [[0, 1], [2, 3]]: rank 0's tp group [0, 1], its dp group [0, 2]" in _lines(mesh_job, 0)
        assert all(not _lines(mesh_job, r) for r in range(1, WORLD))  # only rank 0 prints

    def test_every_rank_builds_the_same_model_before_sharding(self, mesh_job):
        fulls = [mesh_job.records[r]["extra"]["tp"][0]["full"] for r in range(WORLD)]
        for other in fulls[1:]:
            assert all(torch.equal(fulls[0][k], other[k]) for k in fulls[0])
        # tensor parallelism came first: nothing was a plain tensor when FSDP sharded it
        for r in range(WORLD):
            fsdp = mesh_job.records[r]["extra"]["fsdp"]
            assert [e["mesh"] for e in fsdp] == [("dp",), ("replicate", "shard")]
            assert fsdp[0]["full"] == {}

    def test_fsdp_tp_placements_and_local_shards(self, mesh_job):
        full = mesh_job.records[0]["extra"]["tp"][0]["full"]
        for r in range(WORLD):
            step = mesh_job.records[r]["extra"]["steps"][0]
            assert step["placements"] == [FSDP_TP_PLACEMENTS[n] for n in NAMES]
            assert step["shapes"] == [tuple(full[n].shape) for n in NAMES]
            for name, local in zip(NAMES, step["params"]):
                assert local.numel() * WORLD == full[name].numel() or name == "down.bias"
                assert torch.equal(local, _fsdp_tp_slice(name, full[name], r)), f"rank {r} {name}"
        lines = _lines(mesh_job, 0)
        for name in NAMES:
            local = tuple(_fsdp_tp_slice(name, full[name], 0).shape)
            assert f"{name} {tuple(full[name].shape)} {FSDP_TP_PLACEMENTS[name]}, each rank holds {local}" in lines

    def test_fsdp_tp_step_equals_one_process_on_the_whole_batch(self, mesh_job):
        x, y = mesh.make_batch()
        block = _block(mesh_job.records[0]["extra"]["tp"][0]["full"])
        nn.functional.mse_loss(block(x), y).backward()  # all 8 samples: the dp groups' shares together
        grads = dict(block.named_parameters())
        for r in range(WORLD):
            step = mesh_job.records[r]["extra"]["steps"][0]
            for name, g in zip(NAMES, step["grads"]):
                torch.testing.assert_close(g, _fsdp_tp_slice(name, grads[name].grad, r), **TOL)
        # each tp pair fed the same share: 0-3 for dp group 0, 4-7 for dp group 1
        expected = [nn.functional.mse_loss(block(x[s]), y[s]).item() for s in (slice(0, 4), slice(0, 4), slice(4, 8), slice(4, 8))]
        assert _printed_losses(mesh_job, "FSDP x TP: loss by rank ") == pytest.approx(expected, abs=1e-4)

    def test_hsdp_shards_within_a_group_and_replicates_across_groups(self, mesh_job):
        full = mesh_job.records[0]["extra"]["fsdp"][1]["full"]
        lines = _lines(mesh_job, 0)
        for r in range(WORLD):
            step = mesh_job.records[r]["extra"]["steps"][1]
            assert step["placements"] == ["(Replicate(), Shard(dim=0))"] * len(NAMES)
            for name, local in zip(NAMES, step["params"]):
                assert torch.equal(local, _hsdp_slice(full[name], r)), f"rank {r} {name}"
        for r in (0, 1):  # the replica in the other group holds the same shard
            for a, b in zip(mesh_job.records[r]["extra"]["steps"][1]["params"], mesh_job.records[r + 2]["extra"]["steps"][1]["params"]):
                assert torch.equal(a, b)
        for name in NAMES:
            local = tuple(_hsdp_slice(full[name], 0).shape)
            assert f"HSDP {name} {tuple(full[name].shape)} (Replicate(), Shard(dim=0)), each rank holds {local}" in lines

    def test_hsdp_all_reduces_gradient_shards_between_the_replicas(self, mesh_job):
        # FSDP's only blocking dist.all_reduce in this program: HSDP's, over the 2 replicas
        # of each shard (tensor parallelism all-reduces through DTensor instead)
        full = mesh_job.records[0]["extra"]["fsdp"][1]["full"]
        for r in range(WORLD):
            calls = mesh_job.records[r]["extra"]["all_reduce"]
            assert [c["group_size"] for c in calls] == [2]
            assert calls[0]["before"].numel() == sum(_hsdp_slice(t, r).numel() for t in full.values())
            assert mesh_job.records[r]["extra"]["dtensor_all_reduce"] == ["forward"]  # TP: the row-wise output

    def test_hsdp_step_averages_over_all_four_ranks(self, mesh_job):
        x, y = mesh.make_batch()
        block = _block(mesh_job.records[0]["extra"]["fsdp"][1]["full"])
        nn.functional.mse_loss(block(x), y).backward()
        grads = dict(block.named_parameters())
        for r in range(WORLD):
            for name, g in zip(NAMES, mesh_job.records[r]["extra"]["steps"][1]["grads"]):
                torch.testing.assert_close(g, _hsdp_slice(grads[name].grad, r), **TOL)
        expected = [nn.functional.mse_loss(block(x[2 * r:2 * r + 2]), y[2 * r:2 * r + 2]).item() for r in range(WORLD)]
        assert _printed_losses(mesh_job, "HSDP: loss by rank ") == pytest.approx(expected, abs=1e-4)


test_bare_run = bare_run_test(MESH, reference="mesh_job", stdout=(r"^HSDP: loss by rank \[",))
