"""snippets/data_vs_model_parallelism/data_parallel.py, run exactly as docs/data-vs-model-parallelism.md says."""
from __future__ import annotations

import re

import pytest
import torch
from torch import nn
from conftest import bare_run_test, import_program
from torchjob import JobResult
from .lesson import FOLDER, _assert_all_close, _grads, _lines, _load, _run, _seeded

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("data_vs_model_parallelism/data_parallel.py")]


DATA = FOLDER / "data_parallel.py"
data = import_program(DATA)
N_PARAMS = len(list(data.make_model().parameters()))


@pytest.fixture(scope="module")
def data_job(tmp_path_factory, pytestconfig) -> JobResult:
    return _run(DATA, tmp_path_factory, pytestconfig)


def _step_calls(job: JobResult, rank: int, step: int) -> tuple[list[dict], dict]:
    """The all-reduces of one step on one rank: one per gradient, then the loss's."""
    calls = job.records[rank]["extra"]["all_reduce"]
    assert len(calls) == data.STEPS * (N_PARAMS + 1)
    block = calls[step * (N_PARAMS + 1):(step + 1) * (N_PARAMS + 1)]
    return block[:N_PARAMS], block[N_PARAMS]


class TestDataParallel:
    def test_every_rank_trains_every_step(self, data_job):
        assert data_job.world_size >= 2
        for rank in range(data_job.world_size):
            assert len(data_job.records[rank]["extra"]["steps"]) == data.STEPS

    def test_replicas_start_from_rank_0s_weights(self, data_job):
        # each rank seeds with its rank, so without the broadcast the replicas would differ
        drawn = [list(_seeded(data.make_model, r).parameters()) for r in range(data_job.world_size)]
        assert any(not torch.equal(a, b) for a, b in zip(drawn[0], drawn[1]))
        for rank in range(data_job.world_size):
            start = data_job.records[rank]["extra"]["steps"][0]["params"]
            assert all(torch.equal(p, d) for p, d in zip(start, drawn[0])), f"rank {rank} did not start from rank 0's weights"

    def test_each_rank_computes_gradients_on_its_own_share_of_the_batch(self, data_job):
        ws = data_job.world_size
        for step in range(data.STEPS):
            x, y = data.make_batch(step)
            local = {}
            for rank in range(ws):
                grads, _ = _step_calls(data_job, rank, step)
                local[rank] = [c["before"] for c in grads]
                model = _load(data.make_model(), data_job.records[rank]["extra"]["steps"][step]["params"])
                xr, yr = x.chunk(ws)[rank], y.chunk(ws)[rank]
                assert len(xr) == len(x) // ws
                _assert_all_close(local[rank], _grads(model, nn.MSELoss()(model(xr), yr)))
            # the shares differ, so the ranks' gradients did too before the all-reduce
            assert any(not torch.allclose(a, b) for a, b in zip(local[0], local[1]))

    def test_one_all_reduce_of_every_gradient_per_step(self, data_job):
        n_model = sum(p.numel() for p in data.make_model().parameters())
        for step in range(data.STEPS):
            for rank in range(data_job.world_size):
                grads, _ = _step_calls(data_job, rank, step)
                assert sum(c["before"].numel() for c in grads) == n_model  # as large as the model

    def test_averaged_gradient_equals_the_full_batch_gradient_of_one_process(self, data_job):
        for step in range(data.STEPS):
            x, y = data.make_batch(step)
            for rank in range(data_job.world_size):
                record = data_job.records[rank]["extra"]
                model = _load(data.make_model(), record["steps"][step]["params"])
                full_batch = _grads(model, nn.MSELoss()(model(x), y))
                _assert_all_close(record["steps"][step]["grads"], full_batch)
                # what the optimizer applied is what the all-reduce produced, divided by the world size
                grads, _ = _step_calls(data_job, rank, step)
                _assert_all_close([c["after"] / data_job.world_size for c in grads], full_batch)

    def test_replicas_hold_identical_weights_at_every_step(self, data_job):
        for step in range(data.STEPS):
            params = [data_job.records[r]["extra"]["steps"][step]["params"] for r in range(data_job.world_size)]
            for other in params[1:]:
                assert all(torch.equal(a, b) for a, b in zip(params[0], other))
        first = data_job.records[0]["extra"]["steps"][0]["params"]
        last = data_job.records[0]["extra"]["steps"][-1]["params"]
        assert any(not torch.equal(a, b) for a, b in zip(first, last))  # and training moved them

    def test_printed_loss_is_the_full_batch_loss(self, data_job):
        printed = _lines(data_job, 0)
        assert len(printed) == data.STEPS
        assert all(not _lines(data_job, r) for r in range(1, data_job.world_size))  # only rank 0 prints
        for step, line in enumerate(printed):
            match = re.fullmatch(rf"step {step}: loss (\d+\.\d{{4}}), the mean of {data_job.world_size} shares of (\d+) samples", line)
            assert match, line
            assert int(match[2]) == data.GLOBAL_BATCH // data_job.world_size
            x, y = data.make_batch(step)
            model = _load(data.make_model(), data_job.records[0]["extra"]["steps"][step]["params"])
            assert float(match[1]) == pytest.approx(nn.MSELoss()(model(x), y).item(), abs=1e-4)


test_bare_run = bare_run_test(DATA, reference="data_job", stdout=(r"^step 2: loss \d+\.\d{4}, the mean of",))
