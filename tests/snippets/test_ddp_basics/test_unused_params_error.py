"""snippets/ddp_basics/unused_params_error.py, the page's example of the error.

It is unused_params.py without ``find_unused_parameters=True``, and the page says what
happens: the first step runs, and the second forward pass raises, on every rank,
DDP's "Expected to have finished reduction in the prior iteration" error, which with
``TORCH_DISTRIBUTED_DEBUG=INFO`` (on the launch line) names the unused parameters; and
the first step was already wrong: each rank stepped with its own, unaveraged gradient.
"""
from __future__ import annotations

import re

import pytest
import torch
from torch import nn

from conftest import bare_run_test, import_program
from coursekit.runspec import read_spec
from torchjob import JobResult
from .lesson import FOLDER, assert_same, extra, grads_of, load, quiz_answer, run

PROGRAM = FOLDER / "unused_params_error.py"
FIXED = FOLDER / "unused_params.py"
ERROR = "RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one."

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("ddp_basics/unused_params_error.py")]


@pytest.fixture(scope="module")
def job(tmp_path_factory, pytestconfig) -> JobResult:
    return run(PROGRAM, tmp_path_factory, pytestconfig)


def _code(path) -> str:
    return path.read_text(encoding="utf-8").split('"""', 2)[2]


def test_it_is_the_fixed_program_without_the_flag():
    fixed = _code(FIXED)
    assert ",\n                    find_unused_parameters=True)" in fixed
    assert fixed.replace(",\n                    find_unused_parameters=True)", ")") == _code(PROGRAM)
    assert ("TORCH_DISTRIBUTED_DEBUG", "INFO") in read_spec(PROGRAM).lines[0].env


def test_the_first_step_runs_and_the_second_forward_raises_on_every_rank(job):
    assert read_spec(PROGRAM).outcome == "fails"
    assert job.returncode != 0 and not job.timed_out
    assert job.stdout(0).splitlines() == ["step 0: task 0, no gradient for heads.1.weight, heads.1.bias"]
    for log in job.ranks:
        assert ERROR in log.stderr, f"local rank {log.local_rank}\n{log.stderr}"
        # raised in the forward call of the second step, before any of its computation
        tb = log.stderr[log.stderr.index("Traceback (most recent call last)"):]
        assert "loss_fn(ddp_model(x, task), y).backward()" in tb
        assert "in _pre_forward" in tb


def test_step_0_already_applied_each_rank_s_own_gradient_and_the_replicas_diverged(job):
    # the step's reduction never ran: each rank stepped with the gradient of its own batch
    program = import_program(PROGRAM)
    firsts = [extra(job, rank)["steps"][0] for rank in range(job.world_size)]
    for rank, first in enumerate(firsts):
        model = load(program.TwoTaskModel(), first["weights"])
        x = torch.randn(16, 8, generator=torch.Generator().manual_seed(rank))
        assert_same(first["grads"], grads_of(model, nn.MSELoss()(model(x, 0), x.sum(dim=1, keepdim=True))))
    assert not torch.equal(firsts[0]["grads"]["body.0.weight"], firsts[1]["grads"]["body.0.weight"])
    after = [job.records[rank]["final_state"] for rank in range(job.world_size)]
    assert not torch.equal(after[0]["body.0.weight"], after[1]["body.0.weight"])  # before the error appears


def test_with_debug_info_the_error_names_the_unused_parameters(job):
    for log in job.ranks:
        rank = log.local_rank
        assert re.search(rf"Parameters which did not receive grad for rank {rank}: heads\.1\.bias, heads\.1\.weight$",
                         log.stderr, re.M), log.stderr


def test_the_quiz_answer_is_what_happened(job):
    assert quiz_answer("Without `find_unused_parameters=True`") == (
        "Step 0 runs; the forward pass of step 1 raises an error on every rank.")


test_bare_run = bare_run_test(PROGRAM, reference="job", stdout=(r"^step 0: task 0, no gradient for heads\.1\.weight, heads\.1\.bias$",))
