"""snippets/ddp_basics/inside_ddp.py, run exactly as docs/ddp-basics.md says.

The page's claims: DDP's constructor broadcasts rank 0's weights (the ranks start from
different ones); the first backward reduces every gradient in one bucket after backward
has finished; from the second on, DDP reduces one bucket per layer, last layer first,
each launched while backward is still computing the earlier layers' gradients; and by
default the buckets are a second, gradient-sized copy of the gradients.
"""
from __future__ import annotations

import re

import pytest
import torch

from conftest import bare_run_test, import_program
from torchjob import JobResult
from .lesson import FOLDER, extra, quiz_answer, run

PROGRAM = FOLDER / "inside_ddp.py"
inside = import_program(PROGRAM)
N_PARAMS = 2 * inside.LAYERS
_WRAP = re.compile(r"^rank (?P<rank>\d+): weight\[0, 0\] (?P<before>[+-]\d+\.\d{4}) before wrapping, (?P<after>[+-]\d+\.\d{4}) after$", re.M)
_BUCKET = re.compile(r"^step (?P<step>\d+): bucket (?P<index>\d+) \((?P<params>[^)]*)\) launched with (?P<pending>\d+) of (?P<total>\d+) gradients still to compute$", re.M)

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("ddp_basics/inside_ddp.py")]


@pytest.fixture(scope="module")
def job(tmp_path_factory, pytestconfig) -> JobResult:
    return run(PROGRAM, tmp_path_factory, pytestconfig)


def _launches(job: JobResult) -> dict[int, list[dict]]:
    """Rank 0's printed bucket launches, by step."""
    out: dict[int, list[dict]] = {}
    for m in _BUCKET.finditer(job.stdout(0)):
        assert int(m["total"]) == N_PARAMS
        out.setdefault(int(m["step"]), []).append(
            {"index": int(m["index"]), "params": m["params"].split(", "), "pending": int(m["pending"])})
    return out


def _layer(k: int) -> set[str]:
    return {f"{k}.weight", f"{k}.bias"}


def test_the_ranks_build_different_weights(job):
    # without this the broadcast test below could not fail
    before = [extra(job, r)["wraps"][0]["before"] for r in range(job.world_size)]
    for r in range(1, job.world_size):
        assert all(not torch.equal(before[0][k], before[r][k]) for k in before[0])


def test_the_constructor_gives_every_rank_rank_0s_weights(job):
    rank0 = extra(job, 0)["wraps"][0]["before"]
    for r in range(job.world_size):
        after = extra(job, r)["wraps"][0]["after"]
        assert after.keys() == rank0.keys()
        for k in rank0:
            assert torch.equal(after[k], rank0[k]), f"rank {r}: {k}"
    printed = {int(m["rank"]): (m["before"], m["after"]) for m in _WRAP.finditer(job.stdout(0))}
    assert sorted(printed) == list(range(job.world_size))
    assert all(after == printed[0][0] for _, after in printed.values())
    assert len({before for before, _ in printed.values()}) == job.world_size


def test_the_first_backward_reduces_one_bucket_after_backward_ends(job):
    first = _launches(job)[0]
    assert len(first) == 1
    assert set(first[0]["params"]) == set().union(*(_layer(k) for k in range(inside.LAYERS)))
    assert first[0]["pending"] == 0


def test_later_backwards_reduce_one_bucket_per_layer_last_layer_first(job):
    launches = _launches(job)
    assert sorted(launches) == list(range(inside.STEPS))
    for step in range(1, inside.STEPS):
        buckets = launches[step]
        assert [b["index"] for b in buckets] == list(range(inside.LAYERS))
        assert [set(b["params"]) for b in buckets] == [_layer(k) for k in reversed(range(inside.LAYERS))]


def test_all_reduces_start_while_backward_still_runs(job):
    for step in range(1, inside.STEPS):
        pending = [b["pending"] for b in _launches(job)[step]]
        assert pending[0] > 0, "the first bucket waited for the end of backward: no overlap"
        assert pending == sorted(pending, reverse=True) and pending[-1] == 0


def test_every_rank_reduced_the_same_buckets_and_got_the_same_gradients(job):
    reference = [(b["step"], b["index"], b["params"]) for b in extra(job, 0)["buckets"]]
    printed = [(s, b["index"], b["params"]) for s, bs in _launches(job).items() for b in bs]
    assert sorted(reference) == sorted(printed)
    for r in range(1, job.world_size):
        assert [(b["step"], b["index"], b["params"]) for b in extra(job, r)["buckets"]] == reference
        for mine, theirs in zip(extra(job, 0)["steps"], extra(job, r)["steps"], strict=True):
            for name, grad in mine["grads"].items():
                torch.testing.assert_close(theirs["grads"][name], grad, rtol=1e-6, atol=1e-7)


def test_by_default_the_buckets_are_a_second_copy_of_the_gradients(job):
    for r in range(job.world_size):
        rec = extra(job, r)
        n_elements = sum(p.numel() for p in rec["wraps"][0]["after"].values())
        for step in range(inside.STEPS):
            buckets = [b for b in rec["buckets"] if b["step"] == step]
            assert sum(b["numel"] for b in buckets) == n_elements  # as large as all gradients
            grads = rec["steps"][step]["grad_ptrs"]
            assert len(grads) == N_PARAMS
            for name, ptr in grads.items():
                assert not any(b["start"] <= ptr < b["end"] for b in buckets), f"rank {r}, step {step}: {name} lives in a bucket"


def test_the_quiz_answer_is_what_the_program_printed(job):
    launches = _launches(job)
    counts = [len(launches[s]) for s in range(inside.STEPS)]
    assert counts == [1] + [inside.LAYERS] * (inside.STEPS - 1)
    assert quiz_answer("`inside_ddp.py` prints") == f"{counts[0]} in the first, {counts[1]} in each later one."


test_bare_run = bare_run_test(PROGRAM, reference="job", stdout=(r"^step 1: bucket 0 \(3\.bias, 3\.weight\) launched with 6 of 8 ",))
