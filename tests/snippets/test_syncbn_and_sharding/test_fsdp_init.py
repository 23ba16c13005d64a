"""snippets/syncbn_and_sharding/fsdp_init.py, run exactly as docs/syncbn-and-sharding.md says."""
from __future__ import annotations

import pytest
import torch
from conftest import bare_run_test, import_program
from torchjob import JobResult
from verification_plugin import environment
from .lesson import FOLDER, _expected_rows, _run

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("syncbn_and_sharding/fsdp_init.py")]


PROGRAM = FOLDER / "fsdp_init.py"
program = import_program(PROGRAM)


@pytest.fixture(scope="module")
def job(tmp_path_factory, pytestconfig) -> JobResult:
    return _run(PROGRAM, tmp_path_factory, pytestconfig)


def _model(seed: int):
    torch.manual_seed(seed)
    return program.make_model()


def _gathered(job: JobResult) -> list[torch.Tensor]:
    """The three gathered first-layer weights (no broadcast, broadcast from rank 0, reset), as every rank saw them."""
    per_rank = [job.records[r]["extra"]["full_tensors"] for r in range(job.world_size)]
    assert all(len(g) == 3 for g in per_rank), [len(g) for g in per_rank]
    for other in per_rank[1:]:
        assert all(torch.equal(a, b) for a, b in zip(per_rank[0], other))  # a full tensor is the same everywhere
    return per_rank[0]


def _printed(job: JobResult) -> list[str]:
    return [line.split(":", 1)[1].strip() for line in job.stdout(0).splitlines()]


class TestNoBroadcast:
    def test_each_rank_keeps_the_shard_of_what_it_built_itself(self, job):
        weight = _gathered(job)[0]
        inits = [_model(seed)[0][0].weight.detach() for seed in range(job.world_size)]
        chunks = [init.chunk(job.world_size)[rank] for rank, init in enumerate(inits)]
        assert torch.equal(weight, torch.cat(chunks))  # rank r's rows from rank r's seed
        assert not torch.equal(weight, inits[0])  # not rank 0's model, which a broadcast would give
        assert _printed(job)[0] == "rows 0-31 = seed 0 rows 0-31, rows 32-63 = seed 1 rows 32-63"


class TestMetaDeviceAndBroadcastFromRank0:
    def test_the_model_is_built_on_the_meta_device_and_to_empty_gives_its_shards_memory(self, job):
        device = environment(job.world_size)["device"]
        for rank in range(job.world_size):
            calls = job.records[rank]["extra"]["to_empty"]
            assert len(calls) == 2  # the loaded model and the reset one
            for call in calls:
                assert set(call["before"].values()) == {"meta"} and set(call["after"].values()) == {device}

    def test_only_rank_0_passes_the_full_weights_every_rank_receives_them_one_at_a_time_and_keeps_its_shard(self, job):
        full = _model(0).state_dict()
        for rank in range(job.world_size):
            calls = job.records[rank]["extra"]["set_model_state_dicts"]
            assert len(calls) == 1
            call = calls[0]
            assert call["options"]["full_state_dict"] and call["options"]["broadcast_from_rank0"]
            assert call["given"] == (len(full) if rank == 0 else 0)
            # every rank receives each full tensor, one broadcast from rank 0 per tensor
            assert [(b["numel"], b["src"]) for b in call["broadcasts"]] == [(v.numel(), 0) for v in full.values()], f"rank {rank}"
            assert call["after"].keys() == full.keys()
            for name, value in full.items():
                rows = _expected_rows(value.shape[0], job.world_size, rank)
                start = rank * -(-value.shape[0] // job.world_size)
                assert torch.equal(call["after"][name], value[start:start + rows]), f"rank {rank}: {name}"
        assert torch.equal(_gathered(job)[1], full["0.0.weight"])
        assert _printed(job)[1] == "rows 0-31 = seed 0 rows 0-31, rows 32-63 = seed 0 rows 32-63"


class TestResetParameters:
    def test_each_rank_draws_its_own_shard(self, job):
        weight = _gathered(job)[2]
        first_rows = _model(0)[0][0].weight.detach().chunk(job.world_size)[0]
        shards = weight.chunk(job.world_size)
        if environment(job.world_size)["device"] == "cpu":
            # no DTensor random-number tracker on the CPU: every rank, seeded alike, draws the same values
            assert all(torch.equal(shard, first_rows) for shard in shards)
            assert _printed(job)[2] == "rows 0-31 = seed 0 rows 0-31, rows 32-63 = seed 0 rows 0-31"
        else:
            assert not torch.equal(shards[1], shards[0])
        bound = 1 / program.make_model()[0][0].in_features ** 0.5  # nn.Linear's init: U(-1/sqrt(fan_in), 1/sqrt(fan_in))
        assert weight.abs().max() <= bound


test_bare_run = bare_run_test(PROGRAM, reference="job", stdout=(r"^seeded by rank: +rows 0-31 = seed 0 rows 0-31, rows 32-63 = seed 1 ",))
