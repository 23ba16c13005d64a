"""snippets/torchrun_launching/resumable_data.py, run exactly as docs/torchrun-launching.md says.

The page's line once, with lesson 4's recorder, which records every batch each rank read
from the dataset (``reads``). The program itself stops its last rank in the first attempt
(the page says so); nothing else is done to the job. The claims:

* after the restart, each rank reads exactly the batches an uninterrupted run reads from
  the checkpoint's step on, and none before: computed here with torch's own
  ``DistributedSampler``, independent of torchdata;
* the loss divided by the step's token count on all ranks, times the world size, gives
  the gradient of one process's mean over every token of the step (and the mean of each
  rank's own mean does not);
* the whole interrupted run ends with the weights of one process that trains on every
  step's tokens with that mean, and prints its losses;
* only the last of a step's backward passes all-reduces (``no_sync`` on the others);
* each rank loads its own position from the checkpoint;
* a checkpoint saved by another world size is refused with one line.
"""
from __future__ import annotations

import os
import re
import sys

import pytest
import torch
from torch import nn
from torch.utils.data import DistributedSampler

try:  # the program's own dependency, pinned in pyproject.toml's "verify" extra
    from torchdata.stateful_dataloader import StatefulDataLoader
    from torchdata.stateful_dataloader.sampler import StatefulDistributedSampler
except ImportError:
    if os.environ.get("CI") == "true":  # CI installs it: never skip there
        raise
    # a GPU image's own Python (tests/gpu-check.sh) may lack it: say so instead of
    # stopping the whole collection
    pytest.skip(f"Requires: [torchdata==0.11.0] (not installed for {sys.executable}: "
                "pip install torchdata==0.11.0)", allow_module_level=True)

from conftest import ROOT, SNIPPETS, bare_run_test, import_program, run_snippet

PROGRAM = SNIPPETS / "torchrun_launching" / "resumable_data.py"
PAGE = ROOT / "docs" / "torchrun-launching.md"
program = import_program(PROGRAM)
_SAVED = re.compile(r"^step (?P<done>\d+): loss (?P<loss>[\d.]+) per token, checkpoint saved$", re.M)
_START = re.compile(r"^restart (?P<restart>\d+): epoch (?P<epoch>\d+), step (?P<step>\d+) of (?P<steps>\d+)$", re.M)

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("torchrun_launching/resumable_data.py")]


@pytest.fixture(scope="module")
def job(tmp_path_factory, pytestconfig):
    return run_snippet(PROGRAM, tmp_path_factory, pytestconfig, plugins=("record_torchrun_launching",))


def _attempt_record(job, rank: int, attempt: int) -> dict | None:
    """A rank's harness record of one attempt (``job.records`` holds the last ones); None
    when that worker was stopped before it could write one."""
    path = job.job_dir / "harness" / f"rank-{rank}-{attempt}.pt"
    return torch.load(path, weights_only=False) if path.is_file() else None


def _schedule(world_size: int) -> list[tuple[int, list[list[int]]]]:
    """An uninterrupted run's steps, in order: (epoch, the batch of every rank), from
    torch's DistributedSampler with the program's seed, one batch per rank and step."""
    steps = []
    for epoch in range(program.EPOCHS):
        shares = []
        for rank in range(world_size):
            sampler = DistributedSampler(range(program.SEQUENCES), num_replicas=world_size, rank=rank,
                                         shuffle=True, seed=0)
            sampler.set_epoch(epoch)
            order = list(sampler)
            shares.append([order[i:i + program.BATCH_SIZE] for i in range(0, len(order), program.BATCH_SIZE)])
        steps += [(epoch, [share[k] for share in shares]) for k in range(len(shares[0]))]
    return steps


def _token_mean(model: nn.Module, batches: list[torch.Tensor]) -> torch.Tensor:
    """One process's loss: the mean cross-entropy over every token of the given batches."""
    total, tokens = torch.zeros(()), 0
    for inputs, labels in batches:
        logits = model(inputs)
        total = total + nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten(),
                                                    ignore_index=program.IGNORE, reduction="sum")
        tokens += int((labels != program.IGNORE).sum())
    return total / tokens


def _batches(dataset, step: tuple[int, list[list[int]]]) -> list[tuple[torch.Tensor, torch.Tensor]]:
    return [program.collate([dataset[i] for i in batch]) for batch in step[1]]


@pytest.fixture(scope="module")
def one_process(job):
    """The program's training in one process, over every rank's batch of every step, with
    the loss averaged over the step's tokens: (losses before each step, final weights)."""
    dataset = program.Sequences()
    torch.manual_seed(0)
    model = program.make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=program.LR)
    losses = []
    for step in _schedule(job.world_size):
        optimizer.zero_grad()
        loss = _token_mean(model, _batches(dataset, step))
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses, {k: v.detach().clone() for k, v in model.state_dict().items()}


def _resumed_from(job) -> int:
    """The optimizer steps done at the last checkpoint the first attempt printed."""
    return [int(m["done"]) for m in _SAVED.finditer(job.stdout(0, attempt=0))][-1]


def test_the_first_attempt_lost_its_last_rank_and_torchrun_restarted_both(job):
    attempts = sorted({(r.attempt, r.local_rank) for r in job.ranks})
    assert attempts == [(a, lr) for a in (0, 1) for lr in range(job.world_size)]
    for rank in range(job.world_size):
        assert job.records[rank]["restart"] == 1
    last = job.world_size - 1
    lost = [r for r in job.ranks if r.attempt == 0 and r.local_rank == last][0]
    assert f"rank {last}: stopped after step {program.STOP_AT}, as a lost node would" in lost.stderr
    saved = _resumed_from(job)
    assert saved == program.STOP_AT // program.SAVE_EVERY * program.SAVE_EVERY < program.STOP_AT
    start = _START.search(job.stdout(0, attempt=1))
    steps = int(start["steps"])
    assert (int(start["epoch"]), int(start["step"])) == divmod(saved, steps)
    assert int(start["step"]) != 0, "resumed at an epoch boundary: the mid-epoch path was not exercised"


def test_after_the_restart_each_rank_reads_only_what_was_not_trained(job):
    schedule = _schedule(job.world_size)
    saved = _resumed_from(job)
    for rank in range(job.world_size):
        reads = job.records[rank]["extra"]["reads"]
        assert reads == [(epoch, batches[rank]) for epoch, batches in schedule[saved:]], f"rank {rank}"


def test_before_it_was_lost_the_last_rank_read_the_same_order(job):
    # the lost rank's record is written as its SystemExit unwinds; the other rank may be
    # stopped by torchrun before it can write one
    last = job.world_size - 1
    record = _attempt_record(job, last, 0)
    assert record is not None, "the lost rank left no record of its first attempt"
    schedule = _schedule(job.world_size)[:program.STOP_AT]
    assert record["extra"]["reads"] == [(epoch, batches[last]) for epoch, batches in schedule]


def test_the_step_s_gradient_is_one_process_s_mean_over_every_token(job):
    # the first step after the restart: weights before it, DDP's averaged gradients
    first = job.records[0]["first_step"]
    dataset = program.Sequences()
    step = _schedule(job.world_size)[_resumed_from(job)]
    batches = _batches(dataset, step)
    model = program.make_model()
    model.load_state_dict(first["before"])
    model.zero_grad()
    _token_mean(model, batches).backward()
    expected = {n: p.grad.clone() for n, p in model.named_parameters()}
    for rank in range(job.world_size):
        grads = job.records[rank]["first_step"]["grads"]
        assert grads.keys() == expected.keys()
        for name in expected:
            torch.testing.assert_close(grads[name], expected[name], rtol=1e-5, atol=1e-7)
    # the test can tell: the mean of each rank's own per-token mean gives another gradient
    tokens = [int((labels != program.IGNORE).sum()) for _, labels in batches]
    assert len(set(tokens)) > 1, "every rank held as many tokens: the rule was not exercised"
    model.zero_grad()
    (sum(_token_mean(model, [b]) for b in batches) / len(batches)).backward()
    assert any(not torch.allclose(p.grad, expected[n], rtol=1e-3, atol=1e-6) for n, p in model.named_parameters())


def test_the_interrupted_run_ends_with_one_process_s_weights(job, one_process):
    _, expected = one_process
    for rank in range(job.world_size):
        state = job.records[rank]["final_state"]
        assert state.keys() == expected.keys()
        for name in expected:
            torch.testing.assert_close(state[name], expected[name], rtol=1e-4, atol=1e-6)
    checkpoint = torch.load(job.workdir / program.CHECKPOINT, weights_only=True)
    assert checkpoint["done"] == len(_schedule(job.world_size)) and len(checkpoint["data"]) == job.world_size


def test_the_printed_losses_are_one_process_s_per_token_means(job, one_process):
    losses, _ = one_process
    printed = [(int(m["done"]), m["loss"]) for attempt in (0, 1) for m in _SAVED.finditer(job.stdout(0, attempt))]
    assert printed, job.stdout(0, attempt=1)
    for done, loss in printed:
        assert loss == f"{losses[done - 1]:.4f}", f"step {done}"


def test_the_page_s_numbers_are_the_run_s(job):
    # the output itself is shown under the launch command, from the record (bare_run_test)
    text = " ".join(PAGE.read_text(encoding="utf-8").split())
    saved = _resumed_from(job)
    assert f"after step {program.STOP_AT}" in text and f"from the checkpoint of step {saved}" in text
    steps = int(_START.search(job.stdout(0, attempt=1))["steps"])
    assert (f"with {program.SEQUENCES} sequences, {job.world_size} ranks and {program.BATCH_SIZE} sequences per rank "
            f"and step, an epoch has {steps} steps, so step {saved} of the run is step {saved % steps} of epoch "
            f"{saved // steps}") in text


@pytest.mark.filterwarnings("ignore:'set_vital' is deprecated:UserWarning")  # torchdata 0.11 on torch 2.13
def test_a_finished_run_s_checkpoint_resumes_after_its_last_step_and_trains_nothing(job, monkeypatch):
    # what a second launch in the same folder does, step by step: load_checkpoint, then
    # the epoch loop over a loader given each rank's saved position
    monkeypatch.chdir(job.workdir)
    model = program.make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=program.LR)
    dataset = program.Sequences()
    steps = len(_schedule(job.world_size)) // program.EPOCHS
    for rank in range(job.world_size):
        sampler = StatefulDistributedSampler(dataset, num_replicas=job.world_size, rank=rank, shuffle=True, seed=0)
        loader = StatefulDataLoader(dataset, batch_size=program.BATCH_SIZE, sampler=sampler,
                                    collate_fn=program.collate)
        epoch, done = program.load_checkpoint(model, optimizer, loader, torch.device("cpu"), rank, job.world_size)
        batches = 0
        for e in range(epoch, program.EPOCHS):
            sampler.set_epoch(e)
            batches += sum(1 for _ in loader)
        assert batches == 0, f"rank {rank} would train {batches} more batches"
    printed = f"restart 0: epoch {epoch}, step {done - epoch * steps} of {steps}"
    assert f"prints `{printed}` and trains nothing" in " ".join(PAGE.read_text(encoding="utf-8").split())


def test_a_checkpoint_of_another_world_size_is_refused_in_one_line(job, monkeypatch, capsys):
    monkeypatch.chdir(job.workdir)  # the finished run's checkpoint.pt, saved by its ranks
    model = program.make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=program.LR)
    with pytest.raises(SystemExit) as refused:
        program.load_checkpoint(model, optimizer, None, torch.device("cpu"), 0, job.world_size + 1)
    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith(f"{program.CHECKPOINT}: saved by {job.world_size} ranks, this job has {job.world_size + 1}")
    assert f"relaunch with {job.world_size} processes" in message


def test_only_the_last_backward_pass_of_a_step_all_reduces(job):
    for rank in range(job.world_size):
        syncs = job.records[rank]["extra"]["ddp_syncs"]
        steps = len(_schedule(job.world_size)) - _resumed_from(job)
        assert syncs == ([False] * (program.MICRO_BATCHES - 1) + [True]) * steps, f"rank {rank}"


@pytest.mark.filterwarnings("ignore:'set_vital' is deprecated:UserWarning")  # torchdata 0.11 on torch 2.13
def test_each_rank_loads_its_own_position(tmp_path, monkeypatch):
    # two real loaders at different positions, saved as ranks 0 and 1 would save them
    dataset = program.Sequences()

    def loader():
        return StatefulDataLoader(dataset, batch_size=program.BATCH_SIZE, collate_fn=program.collate)

    positions, batches = [], []
    for read in (1, 3):
        source = loader()
        it = iter(source)
        for _ in range(read):
            next(it)
        positions.append(source.state_dict())
        batches.append(next(it))  # the batch after the saved position
    torch.manual_seed(0)
    model = program.make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=program.LR)
    monkeypatch.chdir(tmp_path)
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": 0, "done": 0,
                "data": positions}, program.CHECKPOINT)
    for rank in (0, 1):
        resumed = loader()
        program.load_checkpoint(model, optimizer, resumed, torch.device("cpu"), rank, 2)
        inputs, labels = next(iter(resumed))
        assert torch.equal(inputs, batches[rank][0]) and torch.equal(labels, batches[rank][1]), f"rank {rank}"


test_bare_run = bare_run_test(PROGRAM, stdout=(r"^restart 0: epoch 0, step 0 of \d+$",
                                               r"^restart 1: epoch \d+, step \d+ of \d+$"))
