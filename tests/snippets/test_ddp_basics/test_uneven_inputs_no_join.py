"""snippets/ddp_basics/uneven_inputs_no_join.py, the page's "break it" exercise.

It is uneven_inputs.py with the ``with Join(...)`` line deleted and pinned to gloo on the
CPU, and the page says what happens: the job hangs. Rank 0 finishes its batches and waits in ``all_gather_object``;
rank 1 waits inside the backward pass of its extra batch, for an all-reduce rank 0
never joins. The runner stops the job at its time limit and every rank's Python stack
is dumped into its log; these tests read where each rank was stuck.
"""
from __future__ import annotations

import pytest

from conftest import bare_run_test
from coursekit.runspec import read_spec
from torchjob import JobResult
from .lesson import FOLDER, program_frames, quiz_answer, run, stack

PROGRAM = FOLDER / "uneven_inputs_no_join.py"
FIXED = FOLDER / "uneven_inputs.py"

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("ddp_basics/uneven_inputs_no_join.py")]


@pytest.fixture(scope="module")
def job(tmp_path_factory, pytestconfig) -> JobResult:
    return run(PROGRAM, tmp_path_factory, pytestconfig)


def _rank_stderr(job: JobResult, local_rank: int) -> str:
    logs = [r for r in job.ranks if r.local_rank == local_rank]
    assert len(logs) == 1
    return logs[0].stderr


def _code(path) -> list[str]:
    """The program's lines after its setup function (the break-it program is pinned to
    gloo on the CPU there), without indentation."""
    text = path.read_text(encoding="utf-8")
    return [line.strip() for line in text[text.index("\ndef make_shard"):].splitlines()]


def test_it_is_the_fixed_program_without_the_join_line():
    join = ["from torch.distributed.algorithms.join import Join",
            "with Join([ddp_model]):  # a rank that runs out of batches shadows the others' all-reduces"]
    fixed = _code(FIXED)
    assert all(line not in fixed for line in join[:1]), "the import is above make_shard"
    assert join[1] in fixed
    wrap = "ddp_model = DDP(model, device_ids=[device.index] if device.type == \"cuda\" else None)"
    assert [line if line != wrap else "ddp_model = DDP(model)" for line in fixed if line not in join] == _code(PROGRAM)
    assert "Join" not in PROGRAM.read_text(encoding="utf-8").split('"""', 2)[2]


def test_the_job_hangs_until_stopped(job):
    assert read_spec(PROGRAM).outcome == "hangs"
    assert job.timed_out and job.returncode is None


def test_rank_0_finished_its_batches_and_waits_in_all_gather_object(job):
    assert "rank 0: done with its 3 batches" in job.stdout(0)
    assert "batches per rank" not in job.stdout(0)
    frames = stack(_rank_stderr(job, 0))
    assert frames, _rank_stderr(job, 0)
    assert any(func == "all_gather_object" for _, _, func in frames)
    assert program_frames(frames, PROGRAM)[0] == "dist.all_gather_object(batches, len(loader))  # how many batches every rank trained on"


def test_rank_1_waits_in_the_backward_pass_of_its_extra_batch(job):
    assert job.stdout(1) == ""
    frames = stack(_rank_stderr(job, 1))
    assert frames, _rank_stderr(job, 1)
    assert frames[0][2] == "_engine_run_backward" or any(func == "backward" for _, _, func in frames)
    assert program_frames(frames, PROGRAM)[0] == "loss_fn(ddp_model(x), y).backward()"


def test_the_exercise_answer_is_what_happened(job):
    assert quiz_answer("Delete the `with Join") == "It hangs: rank 0 waits in `all_gather_object`, rank 1 inside `backward()`."


test_bare_run = bare_run_test(PROGRAM, reference="job", stdout=(r"^rank 0: done with its 3 batches$",))
