"""snippets/ddp_basics/mixed_precision.py, run exactly as docs/ddp-basics.md says.

The page's claims: under ``torch.autocast(dtype=torch.bfloat16)`` the Linear layers
compute in bfloat16 while mse_loss computes in float32; the weights stay float32 and
so do the gradients DDP averages and the optimizer applies; the replicas stay equal.
"""
from __future__ import annotations

import re

import pytest
import torch
from torch import nn

from conftest import bare_run_test, import_program
from torchjob import JobResult
from .lesson import FOLDER, extra, run

PROGRAM = FOLDER / "mixed_precision.py"
mixed = import_program(PROGRAM)
_DTYPES = re.compile(r"^output (?P<output>\S+), loss (?P<loss>\S+), weights (?P<weights>\S+), gradients (?P<grads>\S+)$", re.M)

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("ddp_basics/mixed_precision.py")]


@pytest.fixture(scope="module")
def job(tmp_path_factory, pytestconfig) -> JobResult:
    return run(PROGRAM, tmp_path_factory, pytestconfig)


def test_the_program_prints_the_dtypes_the_page_shows(job):
    m = _DTYPES.search(job.stdout(0))
    assert m, job.stdout(0)
    assert m.groupdict() == {"output": "torch.bfloat16", "loss": "torch.float32",
                             "weights": "torch.float32", "grads": "torch.float32"}


def test_the_linear_layers_computed_in_bfloat16(job):
    n_linear = sum(isinstance(m, nn.Linear) for m in mixed.make_model().modules())
    for r in range(job.world_size):
        dtypes = extra(job, r)["linear_dtypes"]
        assert len(dtypes) == min(16, n_linear * mixed.STEPS)
        assert set(dtypes) == {torch.bfloat16}


def test_weights_and_averaged_gradients_stay_float32_and_equal(job):
    for step in range(mixed.STEPS):
        ref = extra(job, 0)["steps"][step]
        for r in range(job.world_size):
            rec = extra(job, r)["steps"][step]
            assert {t.dtype for t in rec["weights"].values()} == {torch.float32}
            assert {t.dtype for t in rec["grads"].values()} == {torch.float32}
            for name in ref["grads"]:
                assert torch.equal(rec["grads"][name], ref["grads"][name]), f"rank {r}, step {step}: {name}"
    for r in range(1, job.world_size):
        for name, value in job.records[0]["final_state"].items():
            assert torch.equal(job.records[r]["final_state"][name], value), name


test_bare_run = bare_run_test(PROGRAM, reference="job", stdout=(r"^output torch\.bfloat16, loss torch\.float32, ",))
