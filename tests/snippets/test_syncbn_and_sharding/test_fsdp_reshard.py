"""snippets/syncbn_and_sharding/fsdp_reshard.py, run exactly as docs/syncbn-and-sharding.md says."""
from __future__ import annotations

import pytest
from conftest import bare_run_test, import_program
from torchjob import JobResult
from .lesson import FOLDER, _ops, _passes, _run

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("syncbn_and_sharding/fsdp_reshard.py")]


PROGRAM = FOLDER / "fsdp_reshard.py"
program = import_program(PROGRAM)
N_UNITS = len(program.make_model())  # three blocks and the root
SETTINGS = (None, False)  # the order the program tries them in


@pytest.fixture(scope="module")
def job(tmp_path_factory, pytestconfig) -> JobResult:
    return _run(PROGRAM, tmp_path_factory, pytestconfig)


def _printed(job: JobResult) -> dict[str, tuple[str, str]]:
    """{setting: (after forward, after backward)} as rank 0 printed them."""
    lines = job.stdout(0).splitlines()
    out = {}
    for i, line in enumerate(lines):
        if line.startswith("reshard_after_forward="):
            setting = line.removeprefix("reshard_after_forward=").rstrip(":")
            out[setting] = (lines[i + 1].split(":", 1)[1].strip(), lines[i + 2].split(":", 1)[1].strip())
    return out


class TestReshardAfterForward:
    def test_by_default_the_blocks_free_their_weights_after_forward_and_the_root_keeps_its(self, job):
        after_forward, after_backward = _printed(job)["None"]
        assert after_forward == "block 0 sharded, block 1 sharded, block 2 sharded, root full"
        assert after_backward == "block 0 sharded, block 1 sharded, block 2 sharded, root sharded"

    def test_with_false_every_unit_keeps_its_full_weights_until_backward(self, job):
        after_forward, after_backward = _printed(job)["False"]
        assert after_forward == "block 0 full, block 1 full, block 2 full, root full"
        assert after_backward == "block 0 sharded, block 1 sharded, block 2 sharded, root sharded"

    def test_what_the_units_held_when_backward_began(self, job):
        # seen by the recorder at torch.autograd.backward: DTensor (sharded) or Parameter (full)
        for rank in range(job.world_size):
            passes = _passes(job.records[rank]["extra"]["events"])
            assert len(passes) == len(SETTINGS)
            for setting, one in zip(SETTINGS, passes):
                units = one["params"][-N_UNITS:]  # this model's units: the root first, then the blocks
                root, blocks = units[0], units[1:]
                assert root == ["Parameter", "Parameter"], (setting, root)
                expected = "DTensor" if setting is None else "Parameter"
                assert all(block == [expected, expected] for block in blocks), (setting, blocks)

    def test_false_saves_the_all_gathers_of_the_backward_pass(self, job):
        for rank in range(job.world_size):
            default, keep = _passes(job.records[rank]["extra"]["events"])
            for one in (default, keep):
                assert len(_ops(one["forward"], "all_gather")) == N_UNITS
                assert len(_ops(one["backward"], "reduce_scatter")) == N_UNITS
            assert len(_ops(default["backward"], "all_gather")) == N_UNITS - 1  # every block again, not the root
            assert len(_ops(keep["backward"], "all_gather")) == 0


test_bare_run = bare_run_test(PROGRAM, reference="job", stdout=(r"^  after forward:  block 0 sharded, .*, root full$",))
