"""snippets/data_vs_model_parallelism/tensor_parallel.py, run exactly as docs/data-vs-model-parallelism.md says."""
from __future__ import annotations

import pytest
import torch
from torch import nn
from conftest import bare_run_test, import_program
from torchjob import JobResult
from .lesson import FOLDER, TOL, _run

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("data_vs_model_parallelism/tensor_parallel.py")]


TENSOR = FOLDER / "tensor_parallel.py"
tensor = import_program(TENSOR)
SHARD_DIM = {"up.weight": 0, "up.bias": 0, "down.weight": 1}  # down.bias is replicated


@pytest.fixture(scope="module")
def tensor_job(tmp_path_factory, pytestconfig) -> JobResult:
    return _run(TENSOR, tmp_path_factory, pytestconfig)


def _unsharded(tensor_job) -> nn.Module:
    """The model in one process, with the weights rank 0 had before sharding (the source
    that ``parallelize_module`` distributes from)."""
    model = tensor.FeedForward()
    model.load_state_dict(tensor_job.records[0]["extra"]["tp"]["full"])
    return model


class TestTensorParallel:
    def test_every_rank_runs_the_step(self, tensor_job):
        assert tensor_job.world_size >= 2
        for rank in range(tensor_job.world_size):
            assert len(tensor_job.records[rank]["extra"]["steps"]) == 1
        for log in tensor_job.ranks:
            assert "holds" in log.stdout and "loss" in log.stdout

    def test_each_rank_holds_its_share_of_each_weight(self, tensor_job):
        ws = tensor_job.world_size
        full = _unsharded(tensor_job).state_dict()
        shards = [tensor_job.records[r]["extra"]["tp"]["shards"] for r in range(ws)]
        assert all(s.keys() == full.keys() for s in shards)
        for name, dim in SHARD_DIM.items():
            for s in shards:
                assert s[name]["shape"] == tuple(full[name].shape)
                assert s[name]["placements"] == f"(Shard(dim={dim}),)"
                expected = list(full[name].shape)
                expected[dim] //= ws
                assert tuple(s[name]["local"].shape) == tuple(expected)  # a 1/ws share
            # the shards are the weight's consecutive slices: together, the whole weight once
            torch.testing.assert_close(torch.cat([s[name]["local"] for s in shards], dim=dim), full[name], rtol=0, atol=0)
        for s in shards:
            assert s["down.bias"]["placements"] == "(Replicate(),)"
            assert torch.equal(s["down.bias"]["local"], full["down.bias"])

    def test_output_equals_the_unsharded_models(self, tensor_job):
        x, _ = tensor.make_batch()
        expected = _unsharded(tensor_job)(x).detach()
        for rank in range(tensor_job.world_size):
            tp = tensor_job.records[rank]["extra"]["tp"]
            assert torch.equal(tp["input"], x)
            torch.testing.assert_close(tp["output"], expected, **TOL)

    def test_each_rank_gets_the_gradient_of_its_own_shards(self, tensor_job):
        ws = tensor_job.world_size
        x, y = tensor.make_batch()
        model = _unsharded(tensor_job)
        nn.functional.mse_loss(model(x), y).backward()
        for rank in range(ws):
            grads = tensor_job.records[rank]["extra"]["tp"]["grads"]
            for name, p in model.named_parameters():
                dim = SHARD_DIM.get(name)
                expected = p.grad if dim is None else p.grad.chunk(ws, dim=dim)[rank]
                torch.testing.assert_close(grads[name], expected, **TOL)


test_bare_run = bare_run_test(TENSOR, reference="tensor_job")
