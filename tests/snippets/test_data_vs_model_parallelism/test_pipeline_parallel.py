"""snippets/data_vs_model_parallelism/pipeline_parallel.py, run exactly as docs/data-vs-model-parallelism.md says."""
from __future__ import annotations

import re

import pytest
import torch
from torch import nn
from conftest import bare_run_test, import_program
from torchjob import JobResult
from .lesson import FOLDER, TOL, _assert_all_close, _grads, _load, _run

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("data_vs_model_parallelism/pipeline_parallel.py")]


PIPE = FOLDER / "pipeline_parallel.py"
pipe = import_program(PIPE)
MICRO = pipe.BATCH // pipe.MICRO_BATCHES
_PRINTED = re.compile(r"^step (?P<step>\d+): loss (?P<loss>-?\d+\.\d{4})$", re.M)


@pytest.fixture(scope="module")
def pipe_job(tmp_path_factory, pytestconfig) -> JobResult:
    return _run(PIPE, tmp_path_factory, pytestconfig, exact_world_size=2)


def _unsplit(pipe_job, step: int) -> nn.Sequential:
    """The whole model in one process, with the weights both stages had at ``step``."""
    model = nn.Sequential(*pipe.build_stage(0), *pipe.build_stage(1))
    values = [v for r in (0, 1) for v in pipe_job.records[r]["extra"]["steps"][step]["params"]]
    return _load(model, values)


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

    def test_the_printed_loss_is_the_unsplit_models_full_batch_loss(self, pipe_job):
        stdout = next(r.stdout for r in pipe_job.ranks if r.local_rank == 1)
        printed = [(int(m["step"]), float(m["loss"])) for m in _PRINTED.finditer(stdout)]
        assert [step for step, _ in printed] == list(range(pipe.STEPS))
        for step, value in printed:
            x, y = pipe.make_batch(step)
            expected = nn.MSELoss()(_unsplit(pipe_job, step)(x), y).item()
            # printed with 4 decimals: half a unit of the last one, plus float32 sums taken in another order
            assert abs(value - expected) <= 0.5e-4 + 1e-5, f"step {step}: printed {value}, the unsplit model's loss is {expected:.6f}"

    def test_gradients_equal_the_unsplit_models(self, pipe_job):
        for step in range(pipe.STEPS):
            x, y = pipe.make_batch(step)
            model = _unsplit(pipe_job, step)
            expected = _grads(model, nn.MSELoss()(model(x), y))
            recorded = [g for r in (0, 1) for g in pipe_job.records[r]["extra"]["steps"][step]["grads"]]
            _assert_all_close(recorded, expected)


test_bare_run = bare_run_test(PIPE, reference="pipe_job")
