"""snippets/syncbn_and_sharding/zero_optimizer.py, run exactly as docs/syncbn-and-sharding.md says."""
from __future__ import annotations

import re
import warnings
import pytest
import torch
from conftest import bare_run_test, import_program
from torchjob import JobResult
from .lesson import FOLDER, TOL, _adam_in_one_process, _files_saved, _run

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("syncbn_and_sharding/zero_optimizer.py")]


ZERO = FOLDER / "zero_optimizer.py"
with warnings.catch_warnings():
    # torch 2.13: importing torch.distributed.optim runs the deprecated torch.jit.script
    # and torch.jit.interface, and this suite turns warnings into errors
    warnings.filterwarnings("ignore", message=r"`torch\.jit\.\w+` is deprecated", category=DeprecationWarning)
    zero = import_program(ZERO)


@pytest.fixture(scope="module")
def zero_job(tmp_path_factory, pytestconfig) -> JobResult:
    return _run(ZERO, tmp_path_factory, pytestconfig)


class TestZeroRedundancyOptimizer:
    def test_each_rank_keeps_optimizer_state_only_for_its_partition(self, zero_job):
        shapes = {n: tuple(p.shape) for n, p in zero.make_model().named_parameters()}
        partitions = []
        for rank in range(zero_job.world_size):
            rec = zero_job.records[rank]["extra"]["zero"]
            assert rec is not None, f"rank {rank} never stepped a ZeroRedundancyOptimizer"
            assert rec["all_params"] == list(shapes)  # the wrapper sees every parameter
            assert set(rec["state"]) == set(rec["params"])  # state only for its own ones
            for name in rec["params"]:  # whole tensors: a parameter is never split
                assert rec["state"][name] == {"step": (), "exp_avg": shapes[name], "exp_avg_sq": shapes[name]}
            assert 0 < len(rec["params"]) < len(shapes)
            partitions.append(set(rec["params"]))
        assert sum(len(p) for p in partitions) == len(shapes)  # disjoint ...
        assert set().union(*partitions) == set(shapes)  # ... and together complete

    def test_the_printed_partition_matches_the_optimizer_state(self, zero_job):
        shapes = {n: torch.Size(p.shape).numel() for n, p in zero.make_model().named_parameters()}
        for rank in range(zero_job.world_size):
            params = zero_job.records[rank]["extra"]["zero"]["params"]
            printed = re.search(r"rank (\d+) keeps Adam state for (\d+) of (\d+) parameter tensors, ([\d,]+) of ([\d,]+) values",
                                zero_job.stdout(rank))
            assert printed and int(printed[1]) == rank
            assert (int(printed[2]), int(printed[3])) == (len(params), len(shapes))
            assert int(printed[4].replace(",", "")) == sum(shapes[n] for n in params)
            assert int(printed[5].replace(",", "")) == sum(shapes.values())

    def test_trained_parameters_match_plain_adam(self, zero_job):
        model, _, _ = _adam_in_one_process(zero, zero_job)
        for rank in range(zero_job.world_size):
            final = zero_job.records[rank]["final_state"]
            assert final.keys() == model.state_dict().keys()
            for name, value in model.state_dict().items():
                torch.testing.assert_close(final[name], value, **TOL)

    def test_the_consolidated_checkpoint_holds_the_whole_adam_state(self, zero_job):
        assert _files_saved(zero_job, 0) == [zero.CHECKPOINT]
        assert all(_files_saved(zero_job, r) == [] for r in range(1, zero_job.world_size))
        saved = torch.load(zero_job.workdir / zero.CHECKPOINT, weights_only=True)
        model, optimizer, _ = _adam_in_one_process(zero, zero_job)
        expected = optimizer.state_dict()["state"]
        assert sorted(saved["optimizer"]["state"]) == sorted(expected)
        for index, state in expected.items():
            for key in ("exp_avg", "exp_avg_sq"):
                torch.testing.assert_close(saved["optimizer"]["state"][index][key], state[key], **TOL)
        for name, value in model.state_dict().items():
            torch.testing.assert_close(saved["model"][name], value, **TOL)


test_bare_run = bare_run_test(ZERO, reference="zero_job")
