"""snippets/data_vs_model_parallelism/tensor_parallel.py, run exactly as docs/data-vs-model-parallelism.md says."""
from __future__ import annotations

import ast
import re

import pytest
import torch
from torch import nn
from conftest import bare_run_test, import_program
from torchjob import JobResult
from .lesson import FOLDER, TOL, _lines, _run, _seeded

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("data_vs_model_parallelism/tensor_parallel.py")]


TENSOR = FOLDER / "tensor_parallel.py"
tensor = import_program(TENSOR)
SHARD_DIM = {"up.weight": 0, "up.bias": 0, "down.weight": 1}  # down.bias is replicated
BLOCKS = 2


@pytest.fixture(scope="module")
def tensor_job(tmp_path_factory, pytestconfig) -> JobResult:
    return _run(TENSOR, tmp_path_factory, pytestconfig)


def _model() -> nn.Sequential:
    return nn.Sequential(*(tensor.FeedForward() for _ in range(BLOCKS)))


def _unsharded(tensor_job) -> nn.Sequential:
    """The model in one process, with the weights rank 0 had before sharding (the source
    that ``parallelize_module`` distributes from)."""
    model = _model()
    for block, entry in zip(model, tensor_job.records[0]["extra"]["tp"], strict=True):
        block.load_state_dict(entry["full"])
    return model


class TestTensorParallel:
    def test_every_rank_runs_the_step(self, tensor_job):
        assert tensor_job.world_size >= 2
        for rank in range(tensor_job.world_size):
            assert len(tensor_job.records[rank]["extra"]["steps"]) == 1
            assert len(tensor_job.records[rank]["extra"]["tp"]) == BLOCKS

    def test_the_shards_are_rank_0s_weights(self, tensor_job):
        # every rank seeds with its rank and draws its own weights before sharding...
        for rank in range(tensor_job.world_size):
            drawn = _seeded(_model, rank).state_dict()
            recorded = {f"{i}.{k}": v for i, e in enumerate(tensor_job.records[rank]["extra"]["tp"]) for k, v in e["full"].items()}
            assert all(torch.equal(drawn[k], recorded[k]) for k in drawn)
        first, second = (_seeded(_model, r).state_dict() for r in (0, 1))
        assert not torch.equal(first["0.up.weight"], second["0.up.weight"])
        # ...and the shards every rank keeps are slices of rank 0's (next test)

    def test_each_rank_holds_its_share_of_each_weight(self, tensor_job):
        ws = tensor_job.world_size
        for block in range(BLOCKS):
            full = tensor_job.records[0]["extra"]["tp"][block]["full"]
            shards = [tensor_job.records[r]["extra"]["tp"][block]["shards"] for r in range(ws)]
            assert all(s.keys() == full.keys() for s in shards)
            for name, dim in SHARD_DIM.items():
                for s in shards:
                    assert s[name]["shape"] == tuple(full[name].shape)
                    assert s[name]["placements"] == f"(Shard(dim={dim}),)"
                    expected = list(full[name].shape)
                    expected[dim] //= ws
                    assert tuple(s[name]["local"].shape) == tuple(expected)  # a 1/ws share
                # the shards are the weight's consecutive slices: together, rank 0's weight once
                torch.testing.assert_close(torch.cat([s[name]["local"] for s in shards], dim=dim), full[name], rtol=0, atol=0)
            for s in shards:
                assert s["down.bias"]["placements"] == "(Replicate(),)"
                assert torch.equal(s["down.bias"]["local"], full["down.bias"])

    def test_printed_shards(self, tensor_job):
        ws = tensor_job.world_size
        lines = _lines(tensor_job, 0)
        full = _model()[0]
        for name, p in full.named_parameters():
            dim = SHARD_DIM.get(name)
            local = list(p.shape)
            if dim is not None:
                local[dim] //= ws
            placement = "Replicate()" if dim is None else f"Shard(dim={dim})"
            assert f"{name} {tuple(p.shape)} {placement}, each rank holds {tuple(local)}" in lines

    def test_output_equals_the_unsharded_models_on_every_rank(self, tensor_job):
        x, _ = tensor.make_batch()
        expected = _unsharded(tensor_job)(x).detach()
        for rank in range(tensor_job.world_size):
            blocks = tensor_job.records[rank]["extra"]["tp"]
            assert torch.equal(blocks[0]["input"], x)
            torch.testing.assert_close(blocks[-1]["output"], expected, **TOL)

    def test_each_rank_gets_the_gradient_of_its_own_shards(self, tensor_job):
        ws = tensor_job.world_size
        x, y = tensor.make_batch()
        model = _unsharded(tensor_job)
        nn.functional.mse_loss(model(x), y).backward()
        for rank in range(ws):
            for block, entry in zip(model, tensor_job.records[rank]["extra"]["tp"]):
                for name, p in block.named_parameters():
                    dim = SHARD_DIM.get(name)
                    expected = p.grad if dim is None else p.grad.chunk(ws, dim=dim)[rank]
                    torch.testing.assert_close(entry["grads"][name], expected, **TOL)

    def test_one_all_reduce_per_block_forward_and_one_backward_for_the_input_that_needs_a_gradient(self, tensor_job):
        # observed on every rank: each block's row-wise layer all-reduces its output in the
        # forward pass; in the backward pass only the second block's input needs a gradient
        # (the first block's input is the data), so exactly one all-reduce runs there
        for rank in range(tensor_job.world_size):
            phases = tensor_job.records[rank]["extra"]["dtensor_all_reduce"]
            assert phases.count("forward") == BLOCKS, phases
            assert phases.count("backward") == BLOCKS - 1, phases
        # and what CommDebugMode reported, as the program printed it on rank 0
        printed = {}
        for line in _lines(tensor_job, 0):
            match = re.fullmatch(r"(forward|backward) pass: (\{.*\})", line)
            if match:
                printed[match[1]] = ast.literal_eval(match[2])
        assert printed == {"forward": {"all_reduce": BLOCKS}, "backward": {"all_reduce": BLOCKS - 1}}

    def test_printed_loss_is_the_unsharded_models(self, tensor_job):
        x, y = tensor.make_batch()
        expected = nn.functional.mse_loss(_unsharded(tensor_job)(x), y).item()
        line = next(l for l in _lines(tensor_job, 0) if l.startswith("output "))
        match = re.fullmatch(rf"output \({tensor.BATCH}, 8\), loss (\d+\.\d{{4}})", line)
        assert match and float(match[1]) == pytest.approx(expected, abs=1e-4), line
        assert all(not _lines(tensor_job, r) for r in range(1, tensor_job.world_size))  # only rank 0 prints


test_bare_run = bare_run_test(TENSOR, reference="tensor_job", stdout=(r"^backward pass: \{'all_reduce': 1\}$",))
