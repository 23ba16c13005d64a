"""snippets/ddp_basics/evaluate.py, run exactly as docs/ddp-basics.md says.

The page's claims: rank 0's own loss is the loss over its share only; all-reducing
every rank's sum and count gives the mean over every rank's samples; a
DistributedSampler over 101 samples on 2 ranks pads to 102 by repeating the first
index of its order, so the padded mean counts that sample twice; shards without
padding give exactly the loss one process computes over the whole dataset.
"""
from __future__ import annotations

import math
import re
from collections import Counter

import pytest
import torch
from torch import nn

from conftest import bare_run_test, import_program
from torchjob import JobResult
from .lesson import FOLDER, extra, load, run

PROGRAM = FOLDER / "evaluate.py"
evaluate = import_program(PROGRAM)
_LINE = re.compile(r"^(?P<what>rank 0 alone|padded sampler|unpadded shards): loss (?P<loss>\d+\.\d{4}) over (?P<count>\d+) samples", re.M)

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("ddp_basics/evaluate.py")]


@pytest.fixture(scope="module")
def job(tmp_path_factory, pytestconfig) -> JobResult:
    return run(PROGRAM, tmp_path_factory, pytestconfig)


@pytest.fixture(scope="module")
def per_sample(job) -> torch.Tensor:
    """Each sample's loss under the evaluated weights, computed in this one process."""
    model = load(evaluate.make_model(), extra(job, 0)["wraps"][0]["after"]).eval()
    x, y = evaluate.make_dataset().tensors
    with torch.no_grad():
        return nn.functional.mse_loss(model(x), y, reduction="none").squeeze(1).double()


def _printed(job: JobResult) -> dict[str, tuple[float, int]]:
    return {m["what"]: (float(m["loss"]), int(m["count"])) for m in _LINE.finditer(job.stdout(0))}


def test_the_sampler_pads_by_repeating_the_first_indices(job):
    n = evaluate.N_SAMPLES
    assert n % job.world_size != 0  # else there is nothing to pad
    shares = [dict(job.records[r]["sampler_epochs"])[0] for r in range(job.world_size)]
    per_rank = math.ceil(n / job.world_size)
    assert all(len(s) == per_rank for s in shares)
    counts = Counter(i for s in shares for i in s)
    assert set(counts) == set(range(n))
    padding = per_rank * job.world_size - n
    assert sorted(i for i, c in counts.items() if c == 2) == list(range(padding))  # shuffle=False: the order is 0, 1, 2, …
    assert all(c <= 2 for c in counts.values())


def test_the_repeats_come_last_and_the_first_samples_of_every_rank_are_the_dataset(job):
    n = evaluate.N_SAMPLES
    shares = [dict(job.records[r]["sampler_epochs"])[0] for r in range(job.world_size)]
    kept = [s[:len(range(r, n, job.world_size))] for r, s in enumerate(shares)]
    assert sorted(i for k in kept for i in k) == list(range(n))
    dropped = [i for r, s in enumerate(shares) for i in s[len(kept[r]):]]
    assert len(dropped) == sum(map(len, shares)) - n > 0


def test_rank_0_alone_sees_only_its_share(job, per_sample):
    share = dict(job.records[0]["sampler_epochs"])[0]
    loss, count = _printed(job)["rank 0 alone"]
    assert count == len(share)
    assert loss == pytest.approx(per_sample[share].mean().item(), abs=1e-4)
    assert abs(loss - per_sample.mean().item()) > 1e-3  # not the global loss


def test_the_padded_metric_counts_the_repeated_samples_twice(job, per_sample):
    shares = [dict(job.records[r]["sampler_epochs"])[0] for r in range(job.world_size)]
    every = [i for s in shares for i in s]
    loss, count = _printed(job)["padded sampler"]
    assert count == len(every) > evaluate.N_SAMPLES
    assert loss == pytest.approx(per_sample[every].mean().item(), abs=1e-4)
    assert abs(loss - per_sample.mean().item()) > 1e-3


def test_unpadded_shards_give_the_loss_over_the_whole_dataset(job, per_sample):
    loss, count = _printed(job)["unpadded shards"]
    assert count == evaluate.N_SAMPLES
    assert loss == pytest.approx(per_sample.mean().item(), abs=1e-4)


test_bare_run = bare_run_test(PROGRAM, reference="job", stdout=(r"^padded sampler: loss \d+\.\d+ over 102 samples of 101$",
                                                               r"^unpadded shards: loss \d+\.\d+ over 101 samples$"))
