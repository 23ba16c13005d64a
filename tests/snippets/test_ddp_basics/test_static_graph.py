"""snippets/ddp_basics/static_graph.py, run exactly as docs/ddp-basics.md says.

The page's claims: when the same head is unused at every step, ``static_graph=True``
(without ``find_unused_parameters``) lets DDP train the model: every step runs, the
unused head's parameters get no gradient while every used parameter gets the gradient
averaged over the ranks, and the replicas stay equal. Without the flag the same model
fails at its second forward pass (unused_params_error.py shows it).
"""
from __future__ import annotations

import re

import pytest
import torch
from torch import nn

from conftest import bare_run_test, import_program
from torchjob import JobResult
from .lesson import FOLDER, assert_same, extra, grads_of, load, run

PROGRAM = FOLDER / "static_graph.py"
static = import_program(PROGRAM)
IDLE = {"heads.1.weight", "heads.1.bias"}
_STEP = re.compile(r"^step (?P<step>\d+): task (?P<task>\d), no gradient for (?P<idle>.+)$", re.M)

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("ddp_basics/static_graph.py")]


@pytest.fixture(scope="module")
def job(tmp_path_factory, pytestconfig) -> JobResult:
    return run(PROGRAM, tmp_path_factory, pytestconfig)


def _batches(rank: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """The batches a rank drew, step by step, as the program draws them."""
    generator = torch.Generator().manual_seed(rank)
    out = []
    for _ in range(static.STEPS):
        x = torch.randn(16, 8, generator=generator)
        out.append((x, x.sum(dim=1, keepdim=True)))
    return out


def test_it_is_unused_params_with_static_graph_and_one_task():
    wrap = re.search(r"DDP\(model, [^\n]*\n\s*(?P<flag>\w+)=True\)", PROGRAM.read_text(encoding="utf-8"))
    assert wrap and wrap["flag"] == "static_graph"
    assert "find_unused_parameters" not in PROGRAM.read_text(encoding="utf-8").split('"""', 2)[2]


def test_every_step_runs_and_the_same_head_gets_no_gradient(job):
    printed = [(int(m["step"]), int(m["task"]), m["idle"]) for m in _STEP.finditer(job.stdout(0))]
    assert printed == [(s, 0, "heads.1.weight, heads.1.bias") for s in range(static.STEPS)]
    names = {n for n, _ in static.TwoTaskModel().named_parameters()}
    for r in range(job.world_size):
        steps = extra(job, r)["steps"]
        assert len(steps) == static.STEPS, f"rank {r}"
        for rec in steps:
            assert set(rec["grads"]) == names - IDLE


def test_the_used_parameters_get_the_gradient_averaged_over_the_ranks(job):
    batches = [_batches(r) for r in range(job.world_size)]
    for step in range(static.STEPS):
        model = load(static.TwoTaskModel(), extra(job, 0)["steps"][step]["weights"])
        x = torch.cat([b[step][0] for b in batches])
        y = torch.cat([b[step][1] for b in batches])
        expected = grads_of(model, nn.MSELoss()(model(x, 0), y))
        for r in range(job.world_size):
            assert_same(extra(job, r)["steps"][step]["grads"], expected)


def test_the_replicas_stay_equal(job):
    for r in range(1, job.world_size):
        for name, value in job.records[0]["final_state"].items():
            assert torch.equal(job.records[r]["final_state"][name], value), name


test_bare_run = bare_run_test(PROGRAM, reference="job", stdout=(r"^step 3: task 0, no gradient for heads\.1\.weight, heads\.1\.bias$",))
