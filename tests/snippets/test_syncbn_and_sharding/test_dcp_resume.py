"""snippets/syncbn_and_sharding/dcp_resume.py, run exactly as docs/syncbn-and-sharding.md says.

The page's line runs two jobs one after the other (two processes, then three), so this
module runs it with the harness itself instead of ``run_snippet``: the second job's
records replace the first's (both have ranks 0 and 1), so the tests read what the first
job did from its output and from the checkpoint folders it left.
"""
from __future__ import annotations

import re
import pytest
import torch
from torch import nn
from conftest import bare_run_test, copy_snippet, import_program
from coursekit.runspec import read_spec
from torchjob import JobResult, run_job
from verification_plugin import hardware_env
from .lesson import FOLDER, PLUGIN, TOL, _expected_rows, _ops

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("syncbn_and_sharding/dcp_resume.py")]


PROGRAM = FOLDER / "dcp_resume.py"
program = import_program(PROGRAM)
SIZES = (2, 3)  # the two jobs of the page's line
_START = re.compile(r"^rank (\d+) of (\d+): starting at step (\d+) \((fresh|from step-\d+)\), holding (\d+) of 64 rows of 0\.0\.weight$", re.M)


@pytest.fixture(scope="module")
def job(tmp_path_factory, pytestconfig) -> JobResult:
    if pytestconfig.getoption("--nproc-per-node") is not None:
        pytest.skip("the page's line runs 2 and then 3 processes; --nproc-per-node would make them the same")
    spec = read_spec(PROGRAM)
    line = spec.lines[0]
    folder = copy_snippet(PROGRAM, tmp_path_factory.mktemp("dcp_resume")).parent
    result = run_job(line, folder, spec.time_limit_s, hardware=hardware_env(max(SIZES))[0], plugins=(PLUGIN,))
    result.check_exit()
    assert sorted(result.records) == list(range(SIZES[-1])), f"no record of every rank of the second job\n{result.report()}"
    for rank, rec in result.records.items():
        assert rec["world_size"] == SIZES[-1] and rec["destroyed"], f"rank {rank}\n{result.report()}"
    return result


def _starts(job: JobResult) -> dict[int, dict[int, tuple[int, str, int]]]:
    """{world size: {rank: (step, where from, rows held)}} as both jobs printed them."""
    out: dict[int, dict[int, tuple[int, str, int]]] = {}
    for log in job.ranks:
        for m in _START.finditer(log.stdout):
            out.setdefault(int(m[2]), {})[int(m[1])] = (int(m[3]), m[4], int(m[5]))
    return out


def _checkpoint(job: JobResult, step: int, tmp_path) -> dict:
    from torch.distributed.checkpoint.format_utils import dcp_to_torch_save

    target = tmp_path / f"step-{step}.pt"
    dcp_to_torch_save(job.workdir / program.CHECKPOINTS / f"step-{step:04d}", target)
    return torch.load(target, weights_only=False)["training"]


@pytest.fixture(scope="module")
def uninterrupted() -> list[dict[str, torch.Tensor]]:
    """The model's state after each step of the same training, done in one process without a stop."""
    torch.manual_seed(0)
    model = program.make_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=program.LR)
    states = []
    for step in range(sum(program.STEPS for _ in SIZES)):
        x = program.global_batch(step)
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), x.sum(dim=1, keepdim=True)).backward()
        optimizer.step()
        states.append({k: v.detach().clone() for k, v in model.state_dict().items()})
    return states


class TestResume:
    def test_two_processes_start_fresh_and_three_resume_from_the_last_checkpoint(self, job):
        starts = _starts(job)
        assert sorted(starts) == list(SIZES)
        first, second = SIZES
        assert starts[first] == {r: (0, "fresh", _expected_rows(64, first, r)) for r in range(first)}
        last = f"from step-{program.STEPS:04d}"
        assert starts[second] == {r: (program.STEPS, last, _expected_rows(64, second, r)) for r in range(second)}

    def test_load_asks_the_stateful_for_its_sharded_tensors_first_and_hands_them_back_loaded(self, job):
        # dcp.load calls state_dict() to get tensors in this job's sharding, loads into
        # them in place, then calls load_state_dict() with those same tensors
        for rank in range(SIZES[-1]):
            calls = job.records[rank]["extra"]["dcp"]["load_calls"]
            assert [c["call"] for c in calls] == ["get_state_dict", "set_state_dict"], f"rank {rank}: {calls}"
            got, given = calls
            assert got["tensors"] > 0 and given["from_get_state_dict"] == given["tensors"] == got["tensors"], f"rank {rank}: {calls}"

    def test_each_job_writes_a_folder_per_step_with_a_file_per_rank(self, job):
        folders = sorted(p.name for p in (job.workdir / program.CHECKPOINTS).iterdir())
        assert folders == [f"step-{s:04d}" for s in range(1, program.STEPS * len(SIZES) + 1)]
        for i, folder in enumerate(folders):
            size = SIZES[i // program.STEPS]
            files = sorted(p.name for p in (job.workdir / program.CHECKPOINTS / folder).iterdir())
            assert files == sorted([".metadata"] + [f"__{r}_0.distcp" for r in range(size)]), folder

    def test_every_checkpoint_holds_the_state_of_its_step(self, job, uninterrupted, tmp_path):
        # async_save copies the state before it returns: the steps after it do not leak into the files
        for step in range(1, program.STEPS * len(SIZES) + 1):
            saved = _checkpoint(job, step, tmp_path)
            assert saved["step"] == step
            assert saved["model"].keys() == uninterrupted[step - 1].keys()
            for name, value in uninterrupted[step - 1].items():
                torch.testing.assert_close(saved["model"][name], value, **TOL)

    def test_the_three_ranks_took_their_new_shards_of_model_and_optimizer(self, job, tmp_path):
        saved = _checkpoint(job, program.STEPS, tmp_path)  # written by two processes
        world = SIZES[-1]
        for rank in range(world):
            restored = job.records[rank]["extra"]["dcp"]["restored"]
            for name, full in saved["model"].items():
                rows = _expected_rows(full.shape[0], world, rank)
                start = rank * -(-full.shape[0] // world)
                assert torch.equal(restored[f"model/{name}"], full[start:start + rows]), f"rank {rank}: {name}"
                for key in ("exp_avg", "exp_avg_sq"):
                    value = saved["optimizer"]["state"][name][key]
                    assert torch.equal(restored[f"optimizer/state/{name}/{key}"], value[start:start + rows])
                assert int(restored[f"optimizer/state/{name}/step"]) == program.STEPS

    def test_the_background_saves_use_their_own_group_off_the_main_thread(self, job):
        for rank in range(SIZES[-1]):
            events = job.records[rank]["extra"]["events"]
            saves = [e for e in _ops(events, "gather_object") if not e["main_thread"]]
            assert saves and all(not e["default_group"] for e in saves)
            assert len(saves) == 2 * program.STEPS  # a plan and the write results, per checkpoint


test_bare_run = bare_run_test(PROGRAM, reference=None, untangle_with="job", stdout=(
    # two jobs on one line: the per-rank output of the harness run cannot be told apart by rank
    r"^rank 0 of 2: starting at step 0 \(fresh\)", r"^2 processes saved steps 1-3$",
    r"^rank 2 of 3: starting at step 3 \(from step-0003\), holding 20 of 64 rows", r"^3 processes saved steps 4-6$"))
