"""snippets/syncbn_and_sharding/fsdp_memory.py, run exactly as docs/syncbn-and-sharding.md says.

The page's claims, for one optimizer step of four micro-batches with the gradients
synchronized only on the last: by default each micro-batch gathers every block in its
forward pass and again in its backward pass; ``reshard_after_forward=False`` drops the
backward pass's all-gathers; ``reshard_after_forward=2`` keeps them, but each rank then
holds half of a block between its forward and backward pass and the backward pass's
all-gather sends half a block from each rank instead of a quarter; keeping the weights
unsharded while accumulating (``set_reshard_after_backward``) gathers each block once in
the whole step; two blocks per unit halve the number of all-gathers and reduce-scatters
and send the same bytes. Every setting takes the same optimizer step, the step one
process takes on all ranks' micro-batches. The counts printed are the recorded ones.
"""
from __future__ import annotations

import re

import pytest
import torch
from torch import nn

from conftest import bare_run_test, import_program
from torchjob import JobResult
from .lesson import FOLDER, _ops, _passes, _run

PROGRAM = FOLDER / "fsdp_memory.py"
program = import_program(PROGRAM)
NAMES = ["default", "reshard_after_forward=False", "reshard_after_forward=2",
         "keep unsharded while accumulating", "two blocks per unit"]
_LINE = re.compile(r"^(?P<name>[^:\n]+): (?P<gathers>\d+) all-gathers, (?P<scatters>\d+) reduce-scatters$", re.M)
B, M = program.BLOCKS, program.MICRO_BATCHES
BLOCK_NUMEL = program.WIDTH * program.WIDTH + program.WIDTH  # a block's weight and bias

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("syncbn_and_sharding/fsdp_memory.py")]


@pytest.fixture(scope="module")
def job(tmp_path_factory, pytestconfig) -> JobResult:
    return _run(PROGRAM, tmp_path_factory, pytestconfig)


def printed(job: JobResult) -> dict[str, tuple[int, int]]:
    return {m["name"]: (int(m["gathers"]), int(m["scatters"])) for m in _LINE.finditer(job.stdout(0))}


def settings(job: JobResult, rank: int) -> dict[str, list[dict]]:
    """Each setting's forward/backward passes on one rank: the events up to each step."""
    events, out, start = job.records[rank]["extra"]["events"], {}, 0
    steps = [i for i, e in enumerate(events) if e["op"] == "step"]
    assert len(steps) == len(NAMES), f"rank {rank}: {len(steps)} optimizer steps"
    for name, end in zip(NAMES, steps, strict=True):
        out[name] = _passes(events[start:end + 1])
        start = end + 1
    assert all(len(p) == M for p in out.values()), {n: len(p) for n, p in out.items()}
    return out


def counts(passes: list[dict], phase: str, op: str) -> list[int]:
    return [len(_ops(p[phase], op)) for p in passes]


def test_the_printed_counts_are_the_recorded_ones(job):
    for rank in range(job.world_size):
        for name, passes in settings(job, rank).items():
            gathers = sum(counts(passes, "forward", "all_gather")) + sum(counts(passes, "backward", "all_gather"))
            scatters = sum(counts(passes, "backward", "reduce_scatter"))
            assert printed(job)[name] == (gathers, scatters), (rank, name)


def test_by_default_every_micro_batch_gathers_each_block_twice(job):
    passes = settings(job, 0)["default"]
    assert counts(passes, "forward", "all_gather") == [B] * M
    assert counts(passes, "backward", "all_gather") == [B] * M
    assert counts(passes, "backward", "reduce_scatter") == [0] * (M - 1) + [B]  # synchronized on the last only


def test_false_drops_the_backward_gathers(job):
    passes = settings(job, 0)["reshard_after_forward=False"]
    assert counts(passes, "forward", "all_gather") == [B] * M
    assert counts(passes, "backward", "all_gather") == [0] * M


def test_an_int_reshards_to_that_many_ranks_between_forward_and_backward(job):
    assert job.world_size == 4
    for rank in range(job.world_size):
        passes = settings(job, rank)
        for default, two in zip(passes["default"], passes["reshard_after_forward=2"], strict=True):
            assert [e["numel"] for e in _ops(default["backward"], "all_gather")] == [BLOCK_NUMEL // 4] * B
            # a rank holds half a block after its forward pass and sends that half
            assert [e["numel"] for e in _ops(two["backward"], "all_gather")] == [BLOCK_NUMEL // 2] * B
            assert [e["numel"] for e in _ops(two["forward"], "all_gather")] == [BLOCK_NUMEL // 4] * B


def test_keeping_the_weights_unsharded_gathers_each_block_once_per_step(job):
    passes = settings(job, 0)["keep unsharded while accumulating"]
    assert counts(passes, "forward", "all_gather") == [B] + [0] * (M - 1)
    assert counts(passes, "backward", "all_gather") == [0] * M
    # what the backward marker saw: full (plain) parameters in every block after the first pass
    for p in passes[1:]:
        units = p["params"][-(B + 1):]  # this model's units: the root (no parameters of its own), the blocks
        assert units[0] == [] and all(unit == ["Parameter", "Parameter"] for unit in units[1:]), units


def test_two_blocks_per_unit_halve_the_collectives_not_the_bytes(job):
    s = settings(job, 0)
    default, grouped = s["default"], s["two blocks per unit"]
    assert counts(grouped, "forward", "all_gather") == [B // 2] * M
    assert counts(grouped, "backward", "reduce_scatter") == [0] * (M - 1) + [B // 2]
    sent = lambda passes: sum(e["numel"] for p in passes for e in _ops(p["forward"], "all_gather"))  # noqa: E731
    assert sent(grouped) == sent(default)


def _after_step(job: JobResult, index: int) -> list[torch.Tensor]:
    """Every parameter after one setting's step, put together from the ranks' shards."""
    shards = [job.records[r]["extra"]["sharded_steps"][index] for r in range(job.world_size)]
    return [torch.cat([s[i]["local"] for s in shards]) for i in range(len(shards[0]))]


def test_every_setting_takes_the_one_process_step(job):
    torch.manual_seed(0)
    model = program.make_model()
    batches = [program.micro_batches(r, torch.device("cpu")) for r in range(job.world_size)]
    for m in range(M):
        x = torch.cat([b[m][0] for b in batches])
        y = torch.cat([b[m][1] for b in batches])
        (nn.functional.mse_loss(model(x), y) / M).backward()
    torch.optim.SGD(model.parameters(), lr=program.LR).step()
    expected = [p.detach() for p in model.parameters()]
    for index, name in enumerate(NAMES):
        for got, want in zip(_after_step(job, index), expected, strict=True):
            torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6, msg=lambda m: f"{name}: {m}")


test_bare_run = bare_run_test(PROGRAM, reference="job", stdout=(
    r"^default: 32 all-gathers, 4 reduce-scatters$",
    r"^keep unsharded while accumulating: 4 all-gathers, 4 reduce-scatters$",
))
