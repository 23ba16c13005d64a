"""snippets/syncbn_and_sharding/fsdp_train.py, run exactly as docs/syncbn-and-sharding.md says."""
from __future__ import annotations

import re
import pytest
import torch
from conftest import bare_run_test, import_program
from torchjob import JobResult
from .lesson import FOLDER, TOL, _adam_in_one_process, _files_saved, _run

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("syncbn_and_sharding/fsdp_train.py")]


FSDP = FOLDER / "fsdp_train.py"
fsdp = import_program(FSDP)


@pytest.fixture(scope="module")
def fsdp_job(tmp_path_factory, pytestconfig) -> JobResult:
    return _run(FSDP, tmp_path_factory, pytestconfig)


def _expected_rows(rows: int, world_size: int, rank: int) -> int:
    """Rows of dim 0 that rank ``rank`` holds: torch.chunk's split, the last ranks may get fewer or none."""
    per_rank = -(-rows // world_size)
    return max(0, min(rows, (rank + 1) * per_rank) - rank * per_rank)


class TestFullyShard:
    def test_each_rank_stores_its_dim0_shard_of_every_parameter(self, fsdp_job):
        ws = fsdp_job.world_size
        shapes = [tuple(p.shape) for p in fsdp.make_model().parameters()]
        for rank in range(ws):
            steps = fsdp_job.records[rank]["extra"]["sharded_steps"]
            assert steps, f"rank {rank} never stepped an optimizer over sharded (DTensor) parameters"
            per_rank = -(-len(fsdp.make_dataset()) // ws)  # DistributedSampler pads to equal shares
            assert len(steps) == fsdp.EPOCHS * -(-per_rank // fsdp.BATCH_SIZE)
            params = steps[-1]
            assert [p["shape"] for p in params] == shapes
            for p in params:
                assert p["local_shape"] == (_expected_rows(p["shape"][0], ws, rank), *p["shape"][1:])

    def test_gradients_and_optimizer_state_are_sharded_the_same_way(self, fsdp_job):
        for rank in range(fsdp_job.world_size):
            for p in fsdp_job.records[rank]["extra"]["sharded_steps"][-1]:
                assert p["grad_local_shape"] == p["local_shape"]
                assert p["state"] == {"exp_avg": p["local_shape"], "exp_avg_sq": p["local_shape"]}

    def test_each_rank_holds_about_its_share_of_the_parameter_bytes(self, fsdp_job):
        ws = fsdp_job.world_size
        held = []
        for rank in range(ws):
            params = fsdp_job.records[rank]["extra"]["sharded_steps"][-1]
            local = sum(torch.Size(p["local_shape"]).numel() * p["element_size"] for p in params)
            total = sum(torch.Size(p["shape"]).numel() * p["element_size"] for p in params)
            printed = re.search(r"rank (\d+) holds ([\d,]+) of ([\d,]+) parameter bytes", fsdp_job.stdout(rank))
            assert printed and int(printed[1]) == rank
            assert (int(printed[2].replace(",", "")), int(printed[3].replace(",", ""))) == (local, total)
            # off from an even split by at most one row of each parameter
            slack = sum(torch.Size(p["shape"][1:]).numel() * p["element_size"] for p in params)
            assert abs(local - total / ws) <= slack
            held.append(local)
        assert sum(held) == total

    def test_gathered_state_matches_the_same_training_in_one_process(self, fsdp_job):
        assert _files_saved(fsdp_job, 0) == [fsdp.CHECKPOINT]
        assert all(_files_saved(fsdp_job, r) == [] for r in range(1, fsdp_job.world_size))
        saved = torch.load(fsdp_job.workdir / fsdp.CHECKPOINT, weights_only=True)

        model, _, initial = _adam_in_one_process(fsdp, fsdp_job)
        assert saved.keys() == model.state_dict().keys()
        for name, value in model.state_dict().items():
            assert saved[name].shape == value.shape  # full, not a shard
            torch.testing.assert_close(saved[name], value, **TOL)
            assert not torch.allclose(saved[name], initial[name], **TOL), f"{name} did not train"


test_bare_run = bare_run_test(FSDP, reference="fsdp_job")
