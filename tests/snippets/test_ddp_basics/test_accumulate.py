"""snippets/ddp_basics/accumulate.py, run exactly as docs/ddp-basics.md says.

The page's claims: with ``no_sync()`` around all micro-batches but the last, DDP runs one
all-reduce per optimizer step instead of one per backward pass, and because each
micro-batch's loss is divided by the number of micro-batches, the accumulated gradient
equals the gradient of one large batch made of every rank's micro-batches.
"""
from __future__ import annotations

import re

import pytest
import torch
from torch import nn

from conftest import bare_run_test, import_program
from torchjob import JobResult
from .lesson import FOLDER, assert_same, extra, grads_of, load, quiz_answer, run

PROGRAM = FOLDER / "accumulate.py"
accumulate = import_program(PROGRAM)
_STEP = re.compile(r"^step (?P<step>\d+): (?P<passes>\d+) backward passes, (?P<reduces>\d+) all-reduce$", re.M)

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("ddp_basics/accumulate.py")]


@pytest.fixture(scope="module")
def job(tmp_path_factory, pytestconfig) -> JobResult:
    return run(PROGRAM, tmp_path_factory, pytestconfig)


def _large_batch(job: JobResult, step: int):
    """Every rank's micro-batches of one optimizer step, as one batch."""
    per_step = accumulate.ACCUM_STEPS * accumulate.MICRO_BATCH
    shares = [dict(job.records[r]["sampler_epochs"])[0] for r in range(job.world_size)]
    return accumulate.make_dataset()[[i for s in shares for i in s[step * per_step:(step + 1) * per_step]]]


def test_one_all_reduce_per_optimizer_step(job):
    printed = [(int(m["step"]), int(m["passes"]), int(m["reduces"])) for m in _STEP.finditer(job.stdout(0))]
    assert printed == [(s, accumulate.ACCUM_STEPS, 1) for s in range(accumulate.STEPS)]
    for r in range(job.world_size):
        rec = extra(job, r)
        assert len(rec["steps"]) == accumulate.STEPS
        per_step = [sum(b["step"] == s for b in rec["buckets"]) for s in range(accumulate.STEPS)]
        assert per_step == [1] * accumulate.STEPS, f"rank {r}: hook calls per optimizer step {per_step}"


def test_the_accumulated_gradient_is_the_large_batch_gradient(job):
    for step in range(accumulate.STEPS):
        x, y = _large_batch(job, step)
        assert len(x) == job.world_size * accumulate.ACCUM_STEPS * accumulate.MICRO_BATCH
        model = load(accumulate.make_model(), extra(job, 0)["steps"][step]["weights"])
        expected = grads_of(model, nn.MSELoss()(model(x), y))
        for r in range(job.world_size):
            assert_same(extra(job, r)["steps"][step]["grads"], expected)


def test_the_replicas_end_equal_to_large_batch_training(job):
    torch.manual_seed(0)
    model = accumulate.make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=accumulate.LR)
    for step in range(accumulate.STEPS):
        x, y = _large_batch(job, step)
        optimizer.zero_grad()
        nn.MSELoss()(model(x), y).backward()
        optimizer.step()
    for r in range(job.world_size):
        assert_same(job.records[r]["final_state"], model.state_dict())


def test_the_quiz_answer_is_what_the_program_printed(job):
    total = sum(int(m["reduces"]) for m in _STEP.finditer(job.stdout(0)))
    passes = sum(int(m["passes"]) for m in _STEP.finditer(job.stdout(0)))
    assert quiz_answer("`accumulate.py` runs") == f"{total}: one per optimizer step."
    assert passes == accumulate.STEPS * accumulate.ACCUM_STEPS == 8


test_bare_run = bare_run_test(PROGRAM, reference="job", stdout=(r"^step 1: 4 backward passes, 1 all-reduce$",))
