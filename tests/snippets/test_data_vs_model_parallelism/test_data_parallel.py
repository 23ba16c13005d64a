"""snippets/data_vs_model_parallelism/data_parallel.py, run exactly as docs/data-vs-model-parallelism.md says."""
from __future__ import annotations

import pytest
import torch
from torch import nn
from conftest import bare_run_test, import_program
from torchjob import JobResult
from .lesson import FOLDER, _assert_all_close, _grads, _load, _run

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("data_vs_model_parallelism/data_parallel.py")]


DATA = FOLDER / "data_parallel.py"
data = import_program(DATA)


@pytest.fixture(scope="module")
def data_job(tmp_path_factory, pytestconfig) -> JobResult:
    return _run(DATA, tmp_path_factory, pytestconfig)


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


test_bare_run = bare_run_test(DATA, reference="data_job")
