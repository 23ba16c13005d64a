"""snippets/syncbn_and_sharding/sharded_checkpoint.py, run exactly as docs/syncbn-and-sharding.md says."""
from __future__ import annotations

import pytest
import torch
from conftest import bare_run_test, import_program
from torchjob import JobResult
from .lesson import FOLDER, _run

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("syncbn_and_sharding/sharded_checkpoint.py")]


CKPT = FOLDER / "sharded_checkpoint.py"
ckpt = import_program(CKPT)


@pytest.fixture(scope="module")
def ckpt_job(tmp_path_factory, pytestconfig) -> JobResult:
    return _run(CKPT, tmp_path_factory, pytestconfig)


def _tensors(flat: dict, prefix: str) -> dict[str, torch.Tensor]:
    return {k: v for k, v in flat.items() if k.startswith(prefix) and isinstance(v, torch.Tensor) and v.dim() > 0}


class TestShardedCheckpoint:
    def test_every_rank_writes_its_own_file(self, ckpt_job):
        files = sorted(p.name for p in (ckpt_job.workdir / ckpt.CHECKPOINT_DIR).iterdir())
        assert files == sorted([".metadata"] + [f"__{r}_0.distcp" for r in range(ckpt_job.world_size)])

    def test_the_reloaded_state_equals_the_saved_one_on_every_rank(self, ckpt_job):
        n_params = len(list(ckpt.make_model().parameters()))
        for rank in range(ckpt_job.world_size):
            rec = ckpt_job.records[rank]["extra"]["dcp"]
            saved, restored = rec["saved"], rec["restored"]
            assert len(_tensors(saved, "model/")) == n_params
            assert len(_tensors(saved, "optimizer/state/")) == 2 * n_params  # exp_avg, exp_avg_sq
            assert restored.keys() == {k for k in saved if k.startswith(("model/", "optimizer/state/"))}
            for key in restored:
                if isinstance(saved[key], torch.Tensor):
                    assert torch.equal(restored[key], saved[key]), f"rank {rank}: {key}"
                else:
                    assert restored[key] == saved[key], f"rank {rank}: {key}"
            assert int(saved["optimizer/state/0.0.weight/step"]) == ckpt.STEPS

    def test_the_fresh_model_differed_before_loading(self, ckpt_job):
        for rank in range(ckpt_job.world_size):
            rec = ckpt_job.records[rank]["extra"]["dcp"]
            before = _tensors(rec["before_load"], "model/")
            assert before.keys() == _tensors(rec["saved"], "model/").keys()
            assert all(not torch.equal(before[k], rec["saved"][k]) for k in before if before[k].numel())

    def test_the_files_hold_the_full_state_that_one_process_can_read(self, ckpt_job, tmp_path):
        from torch.distributed.checkpoint.format_utils import dcp_to_torch_save

        dcp_to_torch_save(ckpt_job.workdir / ckpt.CHECKPOINT_DIR, tmp_path / "full.pt")
        full = torch.load(tmp_path / "full.pt", weights_only=False)
        saved = [ckpt_job.records[r]["extra"]["dcp"]["saved"] for r in range(ckpt_job.world_size)]
        for key in _tensors(saved[0], ""):
            section, *path = key.split("/")
            value = full[section]
            for part in path:
                value = value[part]
            shards = torch.cat([s[key] for s in saved])  # dim-0 shards in rank order
            assert torch.equal(value, shards), key


test_bare_run = bare_run_test(CKPT, reference="ckpt_job")
