"""Lesson 4's teardown claim, for every program that passes: once its code has finished,
no gloo thread is left (docs/torchrun-launching.md, "End every worker cleanly").

In torch 2.13 a gloo process group's threads (``pt_gloo_runloop``, ``gloo_tcp_loop``)
stop only when the group object is freed; ``destroy_process_group()`` frees it only when
nothing else holds it. A thread left running while the interpreter shuts down can abort
the process (``terminate called without an active exception``). Each program runs once,
as its page says, with the base harness only (no lesson plugin, so nothing is imported
ahead of the program); the harness reads the thread names at exit (``threads_at_exit``).

Programs on several terminals or under Slurm are left to their own tests, and so are those on
a fixed port (``fixed_port.py``, ``default_port.py``), which other jobs must not share.
"""
from __future__ import annotations

import pytest

from conftest import SNIPPETS, copy_snippet
from coursekit.runspec import read_spec, torchrun_shape
from torchjob import run_job
from verification_plugin import effective_line, hardware_env

GLOO_THREADS = frozenset({"pt_gloo_runloop", "gloo_tcp_loop"})


def _programs() -> list:
    params = []
    for program in sorted(SNIPPETS.glob("*/*.py")):
        spec = read_spec(program)  # every file there is a program (test_torchjob reads them all)
        line = spec.lines[0]
        if (spec.outcome != "passes" or spec.cuda_gpus or len(spec.lines) != 1 or line.submits is not None
                or torchrun_shape(line.argv)[1] != 1 or "--standalone" not in line.argv):
            continue
        name = f"{program.parent.name}/{program.name}"
        # part of the program's verification: skipped with its own tests while its record
        # stands, and a failure here leaves it without a record (tests/verification_plugin.py)
        params.append(pytest.param(name, id=name, marks=pytest.mark.checks(name)))
    return params


pytestmark = [pytest.mark.torchrun]


@pytest.mark.parametrize("name", _programs())
def test_no_gloo_thread_is_left_when_the_program_ends(name, tmp_path, pytestconfig):
    program = SNIPPETS / name
    spec = read_spec(program)
    line = effective_line(spec, pytestconfig)
    nproc, _ = torchrun_shape(line.argv)
    cwd = copy_snippet(program, tmp_path).parent
    result = run_job(line, cwd, spec.time_limit_s, hardware=hardware_env(nproc)[0])
    result.check_exit()
    # A line of several torchrun commands (dcp_resume.py: 2 processes, then 3) leaves the
    # record of the last process that had each rank, so at least the first command's ranks.
    missing = [rank for rank in range(nproc) if rank not in result.records]
    assert not missing, f"ranks {missing} left no record\n{result.report()}"
    for rank, rec in sorted(result.records.items()):
        left = [t for t in rec["threads_at_exit"] if t in GLOO_THREADS]
        assert not left, (f"{name}, rank {rank}: gloo threads {left} were still running when the program's code had "
                          f"finished: something still held the process group after destroy_process_group() "
                          f"(a DDP model, torch.distributed.nn imported after init_process_group, a DTensor cache "
                          f"holding a mesh, or a reference cycle left uncollected)")
