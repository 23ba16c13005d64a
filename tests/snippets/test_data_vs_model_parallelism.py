"""The programs of docs/data-vs-model-parallelism.md, each run exactly as the page says.

One test class per program. Each test checks one claim of the page against what the
job really did on every rank, read from the records the harness leaves
(tests/harness/sitecustomize.py and tests/harness/record_data_vs_model_parallelism.py),
and compares it with the same computation done by one process on the unsplit model.
"""
from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch import nn

from conftest import SNIPPETS, import_program, run_snippet
from torchjob import JobResult

FOLDER = SNIPPETS / "data_vs_model_parallelism"
PLUGIN = "record_data_vs_model_parallelism"
TOL = dict(rtol=1e-5, atol=1e-6)

pytestmark = [pytest.mark.torchrun]


def _run(program: Path, tmp_path_factory, pytestconfig, *, exact_world_size: int | None = None) -> JobResult:
    """Run a program's launch command on a scratch copy of its folder, with the recorder."""
    return run_snippet(program, tmp_path_factory, pytestconfig, plugins=(PLUGIN,), exact_world_size=exact_world_size)


def _load(model: nn.Module, values: list[torch.Tensor]) -> nn.Module:
    """Set a model's parameters, in ``model.parameters()`` order, to recorded values."""
    params = list(model.parameters())
    assert [tuple(p.shape) for p in params] == [tuple(v.shape) for v in values]
    with torch.no_grad():
        for p, v in zip(params, values):
            p.copy_(v)
    return model


def _grads(model: nn.Module, loss: torch.Tensor) -> list[torch.Tensor]:
    model.zero_grad()
    loss.backward()
    return [p.grad.clone() for p in model.parameters()]


def _assert_all_close(actual: list[torch.Tensor], expected: list[torch.Tensor]) -> None:
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        torch.testing.assert_close(a, e, **TOL)


# --- data parallelism -------------------------------------------------------------------

DATA = FOLDER / "data_parallel.py"
data = import_program(DATA)


@pytest.fixture(scope="module")
def data_job(tmp_path_factory, pytestconfig) -> JobResult:
    return _run(DATA, tmp_path_factory, pytestconfig)


@pytest.mark.verifies("data_vs_model_parallelism/data_parallel.py")
class TestDataParallel:
    def test_every_rank_trains_every_step(self, data_job):
        assert data_job.world_size >= 2
        for rank in range(data_job.world_size):
            assert len(data_job.records[rank]["extra"]["steps"]) == data.STEPS
        for log in data_job.ranks:
            assert f"step {data.STEPS - 1}, loss on its" in log.stdout

    def test_each_rank_computes_gradients_on_its_own_share_of_the_batch(self, data_job):
        n_params = len(list(data.make_model().parameters()))
        ws = data_job.world_size
        for step in range(data.STEPS):
            x, y = data.make_batch(step)
            local = {}
            for rank in range(ws):
                calls = data_job.records[rank]["extra"]["all_reduce"][step * n_params:(step + 1) * n_params]
                local[rank] = [c["before"] for c in calls]
                model = _load(data.make_model(), data_job.records[rank]["extra"]["steps"][step]["params"])
                xr, yr = x.chunk(ws)[rank], y.chunk(ws)[rank]
                assert len(xr) == len(x) // ws
                _assert_all_close(local[rank], _grads(model, nn.MSELoss()(model(xr), yr)))
            # the shares differ, so the ranks' gradients did too before the all-reduce
            assert any(not torch.allclose(a, b) for a, b in zip(local[0], local[1]))

    def test_averaged_gradient_equals_the_full_batch_gradient_of_one_process(self, data_job):
        n_params = len(list(data.make_model().parameters()))
        for step in range(data.STEPS):
            x, y = data.make_batch(step)
            for rank in range(data_job.world_size):
                record = data_job.records[rank]["extra"]
                model = _load(data.make_model(), record["steps"][step]["params"])
                full_batch = _grads(model, nn.MSELoss()(model(x), y))
                _assert_all_close(record["steps"][step]["grads"], full_batch)
                # what the optimizer applied is what the all-reduce produced, divided by the world size
                reduced = [c["after"] for c in record["all_reduce"][step * n_params:(step + 1) * n_params]]
                _assert_all_close([r / data_job.world_size for r in reduced], full_batch)

    def test_replicas_hold_identical_weights_at_every_step(self, data_job):
        for step in range(data.STEPS):
            params = [data_job.records[r]["extra"]["steps"][step]["params"] for r in range(data_job.world_size)]
            for other in params[1:]:
                assert all(torch.equal(a, b) for a, b in zip(params[0], other))
        first = data_job.records[0]["extra"]["steps"][0]["params"]
        last = data_job.records[0]["extra"]["steps"][-1]["params"]
        assert any(not torch.equal(a, b) for a, b in zip(first, last))  # and training moved them


# --- pipeline parallelism ---------------------------------------------------------------

PIPE = FOLDER / "pipeline_parallel.py"
pipe = import_program(PIPE)
MICRO = pipe.BATCH // pipe.MICRO_BATCHES


@pytest.fixture(scope="module")
def pipe_job(tmp_path_factory, pytestconfig) -> JobResult:
    return _run(PIPE, tmp_path_factory, pytestconfig, exact_world_size=2)


def _unsplit(pipe_job, step: int) -> nn.Sequential:
    """The whole model in one process, with the weights both stages had at ``step``."""
    model = nn.Sequential(*pipe.build_stage(0), *pipe.build_stage(1))
    values = [v for r in (0, 1) for v in pipe_job.records[r]["extra"]["steps"][step]["params"]]
    return _load(model, values)


@pytest.mark.verifies("data_vs_model_parallelism/pipeline_parallel.py")
class TestPipelineParallel:
    def test_every_step_runs_on_both_stages(self, pipe_job):
        for rank in (0, 1):
            assert len(pipe_job.records[rank]["extra"]["steps"]) == pipe.STEPS
        last = next(r.stdout for r in pipe_job.ranks if r.local_rank == 1)
        assert f"step {pipe.STEPS - 1}: loss" in last

    def test_each_rank_holds_only_its_own_stage(self, pipe_job):
        for rank in (0, 1):
            held = [tuple(p.shape) for p in pipe_job.records[rank]["extra"]["steps"][0]["params"]]
            assert held == [tuple(p.shape) for p in pipe.build_stage(rank).parameters()]
        n_model = sum(p.numel() for p in _unsplit(pipe_job, 0).parameters())
        n_held = [sum(p.numel() for p in pipe_job.records[r]["extra"]["steps"][0]["params"]) for r in (0, 1)]
        assert sum(n_held) == n_model and all(n < n_model for n in n_held)

    def test_activations_go_forward_and_gradients_come_back_per_micro_batch(self, pipe_job):
        p2p = {r: pipe_job.records[r]["extra"]["p2p"] for r in (0, 1)}
        m = pipe.MICRO_BATCHES
        assert m > 1 and pipe.BATCH % m == 0  # several micro-batches of equal size
        per_step = 2 * m
        assert len(p2p[0]) == len(p2p[1]) == pipe.STEPS * per_step
        for step in range(pipe.STEPS):
            first = p2p[0][step * per_step:(step + 1) * per_step]
            last = p2p[1][step * per_step:(step + 1) * per_step]
            # stage 0: all forwards (send activations), then all backwards (receive gradients)
            assert [(op, peer) for op, peer, _ in first] == [("send", 1)] * m + [("recv", 1)] * m
            assert [(op, peer) for op, peer, _ in last] == [("recv", 0)] * m + [("send", 0)] * m
            for (_, _, sent), (_, _, received) in zip(first[:m] + last[m:], last[:m] + first[m:]):
                assert sent.shape == (MICRO, pipe.HIDDEN)
                assert torch.equal(sent, received)
            # what went forward is the unsplit model's activation after its first stage
            x, _ = pipe.make_batch(step)
            hidden = _unsplit(pipe_job, step)[:2](x)
            torch.testing.assert_close(torch.cat([t for _, _, t in first[:m]]), hidden.detach(), **TOL)

    def test_loss_equals_the_unsplit_models_full_batch_loss(self, pipe_job):
        losses = pipe_job.records[1]["extra"]["losses"]
        assert pipe_job.records[0]["extra"]["losses"] == []  # only the last stage computes a loss
        assert len(losses) == pipe.STEPS * pipe.MICRO_BATCHES
        for step in range(pipe.STEPS):
            x, y = pipe.make_batch(step)
            expected = nn.MSELoss()(_unsplit(pipe_job, step)(x), y)
            micro = torch.stack(losses[step * pipe.MICRO_BATCHES:(step + 1) * pipe.MICRO_BATCHES])
            torch.testing.assert_close(micro.mean(), expected.detach(), **TOL)

    def test_gradients_equal_the_unsplit_models(self, pipe_job):
        for step in range(pipe.STEPS):
            x, y = pipe.make_batch(step)
            model = _unsplit(pipe_job, step)
            expected = _grads(model, nn.MSELoss()(model(x), y))
            recorded = [g for r in (0, 1) for g in pipe_job.records[r]["extra"]["steps"][step]["grads"]]
            _assert_all_close(recorded, expected)


# --- tensor parallelism -----------------------------------------------------------------

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


@pytest.mark.verifies("data_vs_model_parallelism/tensor_parallel.py")
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
