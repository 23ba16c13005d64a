"""snippets/data_vs_model_parallelism/pipeline_hang.py, the "break it" exercise of
docs/data-vs-model-parallelism.md: it hangs, with each stage waiting in ``dist.recv``
for what the other stage never sends."""
from __future__ import annotations

import re

import pytest
from conftest import bare_run_test
from coursekit.runspec import read_spec
from torchjob import JobResult
from .lesson import FOLDER, _lines, _run

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("data_vs_model_parallelism/pipeline_hang.py")]


HANG = FOLDER / "pipeline_hang.py"
SOURCE = HANG.read_text().splitlines()


@pytest.fixture(scope="module")
def hang_job(tmp_path_factory, pytestconfig) -> JobResult:
    # run_snippet asserts the declared outcome: still running at the time limit, then
    # stopped with every rank's stack dumped, nothing left running
    return _run(HANG, tmp_path_factory, pytestconfig, exact_world_size=2)


def _line_of(text: str) -> int:
    """The line number of the one line of the program's code that holds ``text``: where
    a ``blocked-in:`` line of its docstring says a rank hangs (``read_spec`` checks that
    it is exactly one line of code)."""
    found = [b.line for b in read_spec(HANG).blocked_in if b.where == text]
    assert len(found) == 1, (text, read_spec(HANG).blocked_in)
    assert text in SOURCE[found[0] - 1]
    return found[0]


def _innermost_program_frame(stderr: str) -> tuple[int, str]:
    """From a faulthandler dump (most recent call first), the first frame in the
    program: its line number and function name."""
    dump = stderr[stderr.index("most recent call first"):]
    match = re.search(r'File "[^"]*pipeline_hang\.py", line (\d+) in (\w+)', dump)
    assert match, dump
    return int(match[1]), match[2]


class TestPipelineHang:
    def test_it_hangs_in_the_first_step(self, hang_job):
        assert hang_job.timed_out
        assert _lines(hang_job, 0) == ["step 0: stage 0 starts"]  # and never gets further
        assert _lines(hang_job, 1) == []  # stage 1 never prints its loss

    def test_stage_0_is_stuck_receiving_a_gradient(self, hang_job):
        stderr = next(r.stderr for r in hang_job.ranks if r.local_rank == 0)
        line, function = _innermost_program_frame(stderr)
        assert (line, function) == (_line_of("dist.recv(grad, src=1)"), "first_stage_step")
        assert re.search(r"distributed_c10d\.py\", line \d+ in recv", stderr)

    def test_stage_1_is_stuck_receiving_an_activation(self, hang_job):
        stderr = next(r.stderr for r in hang_job.ranks if r.local_rank == 1)
        line, function = _innermost_program_frame(stderr)
        assert (line, function) == (_line_of("dist.recv(act, src=0)"), "last_stage_step")
        assert re.search(r"distributed_c10d\.py\", line \d+ in recv", stderr)


test_bare_run = bare_run_test(HANG, reference="hang_job", stdout=(r"^step 0: stage 0 starts$",))
