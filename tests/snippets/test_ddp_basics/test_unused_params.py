"""snippets/ddp_basics/unused_params.py, run exactly as docs/ddp-basics.md says.

The page's claims: with ``find_unused_parameters=True`` DDP trains a model whose
forward pass leaves a different head unused at every step; the unused head's
parameters get no gradient (``None``) while every used parameter gets the gradient
averaged over the ranks; the replicas stay equal.
"""
from __future__ import annotations

import re

import pytest
import torch
from torch import nn

from conftest import bare_run_test, import_program
from torchjob import JobResult
from .lesson import FOLDER, assert_same, extra, grads_of, load, run

PROGRAM = FOLDER / "unused_params.py"
unused = import_program(PROGRAM)
_STEP = re.compile(r"^step (?P<step>\d+): task (?P<task>\d), no gradient for (?P<idle>.+)$", re.M)

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("ddp_basics/unused_params.py")]


@pytest.fixture(scope="module")
def job(tmp_path_factory, pytestconfig) -> JobResult:
    return run(PROGRAM, tmp_path_factory, pytestconfig)


def _batches(rank: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """The batches a rank drew, step by step, as the program draws them."""
    generator = torch.Generator().manual_seed(rank)
    out = []
    for step in range(unused.STEPS):
        x = torch.randn(16, 8, generator=generator)
        out.append((x, x.sum(dim=1, keepdim=True) * (1 if step % 2 == 0 else -1)))
    return out


def test_each_step_leaves_the_other_head_without_a_gradient(job):
    printed = [(int(m["step"]), int(m["task"]), m["idle"]) for m in _STEP.finditer(job.stdout(0))]
    assert printed == [(s, s % 2, f"heads.{1 - s % 2}.weight, heads.{1 - s % 2}.bias") for s in range(unused.STEPS)]
    for r in range(job.world_size):
        for step, rec in enumerate(extra(job, r)["steps"]):
            idle = {f"heads.{1 - step % 2}.weight", f"heads.{1 - step % 2}.bias"}
            assert set(rec["grads"]) == {n for n, _ in unused.TwoTaskModel().named_parameters()} - idle


def test_the_used_parameters_get_the_gradient_averaged_over_the_ranks(job):
    batches = [_batches(r) for r in range(job.world_size)]
    for step in range(unused.STEPS):
        model = load(unused.TwoTaskModel(), extra(job, 0)["steps"][step]["weights"])
        x = torch.cat([b[step][0] for b in batches])
        y = torch.cat([b[step][1] for b in batches])
        expected = grads_of(model, nn.MSELoss()(model(x, step % 2), y))
        for r in range(job.world_size):
            assert_same(extra(job, r)["steps"][step]["grads"], expected)


def test_the_replicas_stay_equal(job):
    for r in range(1, job.world_size):
        for name, value in job.records[0]["final_state"].items():
            assert torch.equal(job.records[r]["final_state"][name], value), name


test_bare_run = bare_run_test(PROGRAM, reference="job", stdout=(r"^step 3: task 1, no gradient for heads\.0\.weight, heads\.0\.bias$",))
