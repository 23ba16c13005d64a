"""The DDP lesson's program (snippets/ddp_basics/train.py), run exactly as its page says.

Each test checks one claim of docs/ddp-basics.md against what the job really did,
read from the harness records every rank leaves (tests/harness/sitecustomize.py).
"""
from __future__ import annotations


import pytest
import torch

from conftest import SNIPPETS, bare_run_test, import_program, run_snippet
from coursekit.runspec import read_spec
from torchjob import JobResult

PROGRAM = SNIPPETS / "ddp_basics" / "train.py"
SPEC = read_spec(PROGRAM)
train = import_program(PROGRAM)

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("ddp_basics/train.py")]


@pytest.fixture(scope="module")
def job(tmp_path_factory, pytestconfig) -> JobResult:
    return run_snippet(PROGRAM, tmp_path_factory, pytestconfig)


def test_job_runs_on_every_rank_within_its_time_limit(job):
    assert job.world_size >= 2
    assert job.duration_s < SPEC.time_limit_s
    assert sorted(job.records) == list(range(job.world_size))
    assert "epoch 2: loss" in next(r.stdout for r in job.ranks if r.local_rank == 0)


def test_all_ranks_end_with_identical_parameters(job):
    states = [job.records[r]["final_state"] for r in range(job.world_size)]
    assert states[0] is not None
    for other in states[1:]:
        assert states[0].keys() == other.keys()
        for name in states[0]:
            assert torch.equal(states[0][name], other[name]), name
    # and training changed them: the replicas did not just stay at their initial weights
    before = job.records[0]["first_step"]["before"]
    assert any(not torch.equal(before[n], states[0][n]) for n in before)


def test_each_epoch_splits_the_dataset_between_ranks(job):
    n = len(train.make_dataset())
    assert n % job.world_size == 0  # else the sampler pads by repeating indices
    for epoch in range(train.EPOCHS):
        shares = [dict(job.records[r]["sampler_epochs"])[epoch] for r in range(job.world_size)]
        assert all(len(s) == n // job.world_size for s in shares)
        union = set().union(*shares)
        assert len(union) == sum(len(s) for s in shares)  # pairwise disjoint
        assert union == set(range(n))


def test_order_changes_between_epochs(job):
    epochs = dict(job.records[0]["sampler_epochs"])
    assert sorted(epochs) == list(range(train.EPOCHS))  # set_epoch was called every epoch
    orders = [tuple(epochs[e]) for e in range(train.EPOCHS)]
    assert len(set(orders)) == train.EPOCHS


def test_only_rank_zero_writes_a_checkpoint_that_loads_into_the_bare_model(job):
    assert job.records[0]["saves"] == [train.CHECKPOINT]
    for rank in range(1, job.world_size):
        assert job.records[rank]["saves"] == []
    state = torch.load(job.workdir / train.CHECKPOINT, weights_only=True)
    model = train.ToyModel()
    model.load_state_dict(state, strict=True)  # no "module." prefixes
    for name, value in model.state_dict().items():
        assert torch.equal(value, job.records[0]["final_state"][name])


def test_one_ddp_step_equals_one_step_on_the_union_of_the_batches(job):
    dataset = train.make_dataset()
    first = [dict(job.records[r]["sampler_epochs"])[0][: train.BATCH_SIZE] for r in range(job.world_size)]
    x, y = dataset[[i for share in first for i in share]]
    model = train.ToyModel()
    model.load_state_dict(job.records[0]["first_step"]["before"])
    optimizer = torch.optim.SGD(model.parameters(), lr=train.LR)
    optimizer.zero_grad()
    torch.nn.MSELoss()(model(x), y).backward()
    for rank in range(job.world_size):
        ddp_grads = job.records[rank]["first_step"]["grads"]
        for name, p in model.named_parameters():
            torch.testing.assert_close(ddp_grads[name], p.grad, rtol=1e-5, atol=1e-6)
    optimizer.step()
    for rank in range(job.world_size):
        after = job.records[rank]["first_step"]["after"]
        for name, value in model.state_dict().items():
            torch.testing.assert_close(after[name], value, rtol=1e-5, atol=1e-6)


test_bare_run = bare_run_test(PROGRAM, reference="job", stdout=(r"^epoch 2: loss ",))
