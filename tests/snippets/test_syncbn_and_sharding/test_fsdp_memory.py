"""snippets/syncbn_and_sharding/fsdp_memory.py, run exactly as docs/syncbn-and-sharding.md says.

The page's claims, for one optimizer step of four micro-batches with the gradients
synchronized only on the last: by default each micro-batch gathers every block in its
forward pass and again in its backward pass; ``reshard_after_forward=False`` drops the
backward pass's all-gathers; ``reshard_after_forward=2`` keeps them, but each rank then
holds half of a block between its forward and backward pass and the backward pass's
all-gather sends half a block from each rank instead of a quarter, within pairs of
consecutive ranks; keeping the weights
unsharded while accumulating (``set_reshard_after_backward``) gathers each block once in
the whole step; two blocks per unit halve the number of all-gathers and reduce-scatters
and send the same bytes; an int must divide the number of ranks. Every setting takes the
same optimizer step, the step one process takes on all ranks' micro-batches. The counts
printed are the recorded ones.
"""
from __future__ import annotations

import re

import pytest
import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard

from conftest import bare_run_test, import_program
from torchjob import JobResult
from .lesson import FOLDER, PAGE, _ops, _passes, _run

PROGRAM = FOLDER / "fsdp_memory.py"
program = import_program(PROGRAM)
NAMES = ["default", "reshard_after_forward=False", "reshard_after_forward=2",
         "keep unsharded while accumulating", "two blocks per unit"]
_LINE = re.compile(r"^(?P<name>[^:\n]+): (?P<gathers>\d+) all-gathers, (?P<scatters>\d+) reduce-scatters$", re.M)
BLOCKS, MICRO_BATCHES = program.BLOCKS, program.MICRO_BATCHES
BLOCK_NUMEL = program.WIDTH * program.WIDTH + program.WIDTH  # a block's weight and bias

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("syncbn_and_sharding/fsdp_memory.py")]


@pytest.fixture(scope="module")
def job(tmp_path_factory, pytestconfig) -> JobResult:
    # the rank pairs and shard sizes below are worked out for four ranks
    return _run(PROGRAM, tmp_path_factory, pytestconfig, exact_world_size=4)


def printed(job: JobResult) -> dict[str, tuple[int, int]]:
    """{setting: (all-gathers, reduce-scatters)} as rank 0 printed them."""
    return {m["name"]: (int(m["gathers"]), int(m["scatters"])) for m in _LINE.finditer(job.stdout(0))}


def settings(job: JobResult, rank: int) -> dict[str, list[dict]]:
    """Each setting's forward/backward passes on one rank: the events up to each step."""
    events, out, start = job.records[rank]["extra"]["events"], {}, 0
    steps = [i for i, e in enumerate(events) if e["op"] == "step"]
    assert len(steps) == len(NAMES), f"rank {rank}: {len(steps)} optimizer steps"
    for name, end in zip(NAMES, steps, strict=True):
        out[name] = _passes(events[start:end + 1])
        start = end + 1
    assert all(len(p) == MICRO_BATCHES for p in out.values()), {n: len(p) for n, p in out.items()}
    return out


def counts(passes: list[dict], phase: str, op: str) -> list[int]:
    """How many ``op`` collectives each pass ran in ``phase`` ("forward", "backward")."""
    return [len(_ops(p[phase], op)) for p in passes]


def test_the_printed_counts_are_the_recorded_ones(job):
    for rank in range(job.world_size):
        for name, passes in settings(job, rank).items():
            gathers = sum(counts(passes, "forward", "all_gather")) + sum(counts(passes, "backward", "all_gather"))
            scatters = sum(counts(passes, "backward", "reduce_scatter"))
            assert printed(job)[name] == (gathers, scatters), (rank, name)


def test_by_default_every_micro_batch_gathers_each_block_twice(job):
    passes = settings(job, 0)["default"]
    assert counts(passes, "forward", "all_gather") == [BLOCKS] * MICRO_BATCHES
    assert counts(passes, "backward", "all_gather") == [BLOCKS] * MICRO_BATCHES
    assert counts(passes, "backward", "reduce_scatter") == [0] * (MICRO_BATCHES - 1) + [BLOCKS]  # synchronized on the last only


def test_false_drops_the_backward_gathers(job):
    passes = settings(job, 0)["reshard_after_forward=False"]
    assert counts(passes, "forward", "all_gather") == [BLOCKS] * MICRO_BATCHES
    assert counts(passes, "backward", "all_gather") == [0] * MICRO_BATCHES


def test_an_int_reshards_to_that_many_ranks_between_forward_and_backward(job):
    for rank in range(job.world_size):
        passes = settings(job, rank)
        for default, two in zip(passes["default"], passes["reshard_after_forward=2"], strict=True):
            assert [e["numel"] for e in _ops(default["backward"], "all_gather")] == [BLOCK_NUMEL // 4] * BLOCKS
            # a rank holds half a block after its forward pass and sends that half, to its pair
            backward = _ops(two["backward"], "all_gather")
            assert [e["numel"] for e in backward] == [BLOCK_NUMEL // 2] * BLOCKS
            pair = [0, 1] if rank < 2 else [2, 3]
            assert [e["ranks"] for e in backward] == [pair] * BLOCKS, rank
            forward = _ops(two["forward"], "all_gather")
            assert [e["numel"] for e in forward] == [BLOCK_NUMEL // 4] * BLOCKS
            assert [e["ranks"] for e in forward] == [[0, 1, 2, 3]] * BLOCKS


def test_keeping_the_weights_unsharded_gathers_each_block_once_per_step(job):
    passes = settings(job, 0)["keep unsharded while accumulating"]
    assert counts(passes, "forward", "all_gather") == [BLOCKS] + [0] * (MICRO_BATCHES - 1)
    assert counts(passes, "backward", "all_gather") == [0] * MICRO_BATCHES
    # what the backward marker saw: full (plain) parameters in every block after the first pass
    for p in passes[1:]:
        units = p["params"][-(BLOCKS + 1):]  # this model's units: the root (no parameters of its own), the blocks
        assert units[0] == [] and all(unit == ["Parameter", "Parameter"] for unit in units[1:]), units


def test_two_blocks_per_unit_halve_the_collectives_not_the_bytes(job):
    s = settings(job, 0)
    default, grouped = s["default"], s["two blocks per unit"]
    assert counts(grouped, "forward", "all_gather") == [BLOCKS // 2] * MICRO_BATCHES
    assert counts(grouped, "backward", "reduce_scatter") == [0] * (MICRO_BATCHES - 1) + [BLOCKS // 2]
    for phase, op in (("forward", "all_gather"), ("backward", "all_gather"), ("backward", "reduce_scatter")):
        sent = lambda passes: sum(e["numel"] for p in passes for e in _ops(p[phase], op))  # noqa: E731
        assert sent(grouped) == sent(default), (phase, op)


def test_an_int_must_divide_the_ranks_the_model_is_sharded_over():
    # a real gloo process group of one process in this test's process: 2 does not divide 1
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    mesh = None
    try:
        mesh = init_device_mesh("cpu", (1,))
        with pytest.raises(ValueError, match="factor of 1"):
            fully_shard(nn.Linear(2, 2), mesh=mesh, reshard_after_forward=2)
    finally:
        del mesh  # a mesh holds its process groups
        dist.destroy_process_group()


def _after_step(job: JobResult, index: int) -> list[torch.Tensor]:
    """Every parameter after one setting's step, put together from the ranks' shards."""
    shards = [job.records[r]["extra"]["sharded_steps"][index] for r in range(job.world_size)]
    return [torch.cat([s[i]["local"] for s in shards]) for i in range(len(shards[0]))]


def test_every_setting_takes_the_one_process_step(job):
    torch.manual_seed(0)
    model = program.make_model()
    batches = [program.micro_batches(r, torch.device("cpu")) for r in range(job.world_size)]
    for m in range(MICRO_BATCHES):
        x = torch.cat([b[m][0] for b in batches])
        y = torch.cat([b[m][1] for b in batches])
        (nn.functional.mse_loss(model(x), y) / MICRO_BATCHES).backward()
    torch.optim.SGD(model.parameters(), lr=program.LR).step()
    expected = [p.detach() for p in model.parameters()]
    for index, name in enumerate(NAMES):
        for got, want in zip(_after_step(job, index), expected, strict=True):
            torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6, msg=lambda m: f"{name}: {m}")


test_bare_run = bare_run_test(PROGRAM, reference="job", stdout=(
    r"^default: 32 all-gathers, 4 reduce-scatters$",
    r"^keep unsharded while accumulating: 4 all-gathers, 4 reduce-scatters$",
))


def test_the_page_s_counts_are_the_printed_ones(job):
    text = " ".join(PAGE.read_text(encoding="utf-8").split())
    runs = printed(job)
    assert f"{runs['default'][0]} all-gathers in the step" in text
    assert f"to its backward pass: {runs['reshard_after_forward=False'][0]} all-gathers" in text
    assert f"The step still runs {runs['reshard_after_forward=2'][0]} all-gathers" in text
    assert f"whole step, {runs['keep unsharded while accumulating'][0]} all-gathers" in text
    grouped = runs["two blocks per unit"]
    assert f"{grouped[0]} all-gathers and {grouped[1]} reduce-scatters" in text
    assert f"need only {runs['keep unsharded while accumulating'][0]} all-gathers" in text
    assert f"the default setting runs {runs['default'][0]}." in text
