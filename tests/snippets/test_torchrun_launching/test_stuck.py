"""snippets/torchrun_launching/stuck.py, run exactly as docs/torchrun-launching.md says.

A "hangs" program: rank 0 alone calls all_reduce, the others wait at the barrier. Two runs
of the page's line: a bare one in which the test does what the page tells the reader to
do while the job hangs (``py-spy dump --pid PID`` for each worker, then ``kill -USR1 PID``
for the stack that the program's faulthandler prints), and the harness run. The runner
stops each once every rank is seen where the program's ``blocked-in:`` lines say (or at
the time limit), after dumping every rank's stack into its log (harness run).
"""
from __future__ import annotations

import os
import re
import signal
import shlex
import subprocess
import time

import pytest

from conftest import SNIPPETS, bare_run_test, copy_snippet, run_snippet, snippet_section
from coursekit.runspec import read_spec, torchrun_shape
from torchjob import VENV_BIN, Hang, finish, launch
from slurm_plugin import require_this_machine
from verification_plugin import effective_line, hardware_env

from .lesson import wait_for

PROGRAM = SNIPPETS / "torchrun_launching" / "stuck.py"
SPEC = read_spec(PROGRAM)
_LOSS = re.compile(r"^rank (?P<rank>\d+) \(pid (?P<pid>\d+)\): local loss ", re.M)
_DUMP_END = re.compile(r"^\s+File \"[^\"]*\", line \d+ in <module>$", re.M)  # the last line of a faulthandler dump

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("torchrun_launching/stuck.py")]


@pytest.fixture(scope="module")
def job(tmp_path_factory, pytestconfig):
    """The harness run: still running at the limit, every rank's stack in its stderr."""
    return run_snippet(PROGRAM, tmp_path_factory, pytestconfig)


@pytest.fixture(scope="module")
def probed(tmp_path_factory, pytestconfig):
    """The page's line run bare; while it hangs, py-spy and SIGUSR1 on every worker."""
    require_this_machine(pytestconfig, "py-spy and kill -USR1 on each worker's process id")
    if not (VENV_BIN / "py-spy").is_file():  # e.g. a GPU image's own Python, without py-spy
        why = f"Requires: [py-spy] ({VENV_BIN / 'py-spy'} is missing: make test-deps, or pip install py-spy)"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(why)
        pytest.skip(why)
    line = effective_line(SPEC, pytestconfig)
    nproc, nnodes = torchrun_shape(line.argv)
    cwd = copy_snippet(PROGRAM, tmp_path_factory.mktemp("stuck_bare")).parent
    started = time.monotonic()
    running = launch(line, cwd, bare=True, hardware=hardware_env(nproc)[0])
    # (a Slurm job's node creates the file once the job runs)
    out = lambda: running.stdout_path.read_text(errors="replace") if running.stdout_path.is_file() else ""
    # the hang is reached once every rank printed its loss and the others reached the barrier
    reached = wait_for(lambda: len(_LOSS.findall(out())) == nproc and out().count("waiting at the barrier") == nproc - 1,
                       SPEC.time_limit_s - 10)
    time.sleep(1.0)
    pids = {int(m["rank"]): int(m["pid"]) for m in _LOSS.finditer(out())}
    dumps = {}
    for rank, pid in sorted(pids.items()):
        # the page's command (the program's "stacks" section), for this worker's process id
        argv = shlex.split(snippet_section(PROGRAM, "stacks").replace("PID", str(pid)))
        dump = subprocess.run([str(VENV_BIN / argv[0]), *argv[1:]], capture_output=True, text=True, timeout=30)
        dumps[rank] = dump.stdout + dump.stderr
    faults = {}
    for rank, pid in sorted(pids.items()):
        before = running.stderr_path.read_text(errors="replace")
        subprocess.run(["kill", "-USR1", str(pid)], check=True)  # as the page says, from a shell
        # faulthandler writes a dump frame by frame; it is complete once the main thread's
        # outermost frame (<module>, printed last: threads go newest first) is there
        wait_for(lambda: _DUMP_END.search(running.stderr_path.read_text(errors="replace")[len(before):]), 10)
        faults[rank] = running.stderr_path.read_text(errors="replace")[len(before):]
    result = finish(running, SPEC.time_limit_s, started, hang=Hang.of(SPEC, nproc * nnodes))
    return {"reached": reached, "pids": pids, "py-spy": dumps, "faulthandler": faults, "result": result, "nproc": nproc}


def test_every_rank_reaches_its_collective_and_the_job_then_hangs(probed):
    assert probed["reached"], probed["result"].report()
    assert sorted(probed["pids"]) == list(range(probed["nproc"]))
    result = probed["result"]
    assert result.timed_out and not result.leftovers, result.report()
    assert "mean loss" not in result.stdout_text  # rank 0's all_reduce never returned
    assert "rank 0: waiting at the barrier" not in result.stdout_text  # nor did rank 0 get past it


def test_py_spy_shows_rank_0_in_all_reduce_and_the_others_in_barrier(probed):
    dumps = probed["py-spy"]
    assert re.search(r"^\s+all_reduce \(torch/distributed/distributed_c10d\.py:\d+\)$", dumps[0], re.M), dumps[0]
    assert re.search(r"^\s+main \(stuck\.py:\d+\)$", dumps[0], re.M), dumps[0]
    for rank in range(1, probed["nproc"]):
        assert re.search(r"^\s+barrier \(torch/distributed/distributed_c10d\.py:\d+\)$", dumps[rank], re.M), dumps[rank]
        assert "all_reduce" not in dumps[rank]


def test_kill_usr1_prints_the_stack_through_the_programs_faulthandler(probed):
    faults = probed["faulthandler"]
    assert re.search(r'line \d+ in all_reduce\n.*\n\s+File ".*stuck\.py", line \d+ in main', faults[0]), faults[0]
    for rank in range(1, probed["nproc"]):
        assert re.search(r'line \d+ in barrier\n.*\n\s+File ".*stuck\.py", line \d+ in main', faults[rank]), faults[rank]
    assert probed["result"].returncode is None  # the signal printed the stacks and stopped nothing


def test_the_runners_stack_dump_agrees(job):
    stacks = {log.local_rank: log.stderr for log in job.ranks}  # one node: local rank = rank
    assert sorted(stacks) == list(range(job.world_size))
    assert " in all_reduce" in stacks[0], stacks[0]
    assert all(" in barrier" in stderr for local_rank, stderr in stacks.items() if local_rank != 0), stacks


test_bare_run = bare_run_test(PROGRAM, reference="job",
                              stdout=(r"^rank 0 \(pid \d+\): local loss [\d.]+$", r"^rank 1: waiting at the barrier$"))
