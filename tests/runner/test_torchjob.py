"""The runner itself: hangs and crashes fail fast, with diagnostics, and leave nothing
behind; a job's environment is the page's and nothing else."""
from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from coursekit.runspec import BlockedIn, parse_line, read_spec
from torchjob import (HARDWARE_ENV, OBSERVATION_ENV, SETTLE_S, VENV_BIN, Hang, PageEnvironmentError, bare_folder,
                      check_page_env, pids_alive, run_bare, run_job, worker_pids)

PLANTED = Path(__file__).parent / "planted"
SNIPPETS = Path(__file__).resolve().parents[2] / "snippets"
LIMIT_S = 25.0  # a crash ends in about 6 s on two idle cores; the deadlocks wait this long
# A hang declared where it happens ends once both ranks have been seen there for SETTLE_S:
# start-up plus SETTLE_S, which reached 26-28 s in a CI run on a slower, loaded two-core
# host (Lighthouse benchmark index about 1,300; three torch imports per job). The limit only
# has to exceed that to show the early stop; a run that works never waits it out.
EARLY_LIMIT_S = 90.0
# what torchrun, bash and Python put into a worker's environment by themselves
# (torch/distributed/elastic/agent/server/local_elastic_agent.py, run.py's OMP_NUM_THREADS
# and TORCHELASTIC_SIGNALS_TO_HANDLE; Python's PEP 538 locale coercion sets LC_CTYPE)
_TORCHRUN_SETS = {"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "GROUP_WORLD_SIZE",
                  "ROLE_RANK", "ROLE_NAME", "ROLE_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RESTART_COUNT",
                  "TORCHELASTIC_MAX_RESTARTS", "TORCHELASTIC_RUN_ID", "TORCHELASTIC_USE_AGENT_STORE",
                  "TORCH_NCCL_ASYNC_ERROR_HANDLING", "TORCHELASTIC_ERROR_FILE", "OMP_NUM_THREADS", "PWD", "SHLVL", "_",
                  "TORCHELASTIC_ENABLE_FILE_TIMER", "TORCHELASTIC_TIMER_FILE", "TORCHELASTIC_SIGNALS_TO_HANDLE", "LC_CTYPE"}

pytestmark = pytest.mark.torchrun


def _run(tmp_path: Path, name: str, bare: bool = False):
    shutil.copy(PLANTED / name, tmp_path / name)
    line = f"torchrun --standalone --nproc-per-node=2 {name}"
    return (run_bare if bare else run_job)(line, tmp_path, LIMIT_S)


def test_a_deadlock_fails_within_the_limit_with_every_stack_and_nothing_left(tmp_path):
    result = _run(tmp_path, "deadlock.py")
    assert result.timed_out
    assert result.duration_s < LIMIT_S + 10
    pids = worker_pids(result)
    assert len(pids) == 2
    assert pids_alive(pids) == []
    assert result.leftovers == []
    report = result.report()
    assert "TIMED OUT" in report
    # faulthandler's dump from each rank shows where it was stuck
    stacks = [r.stderr for r in result.ranks]
    assert len(stacks) == 2
    for stderr in stacks:
        assert "deadlock.py\", line 8" in stderr, stderr
    with pytest.raises(AssertionError, match="TIMED OUT"):
        result.check(world_size=2)


def test_a_bare_deadlock_is_stopped_at_the_limit_with_nothing_left(tmp_path):
    result = _run(tmp_path, "deadlock.py", bare=True)
    assert result.timed_out and result.bare
    assert result.duration_s < LIMIT_S + 10
    assert result.leftovers == []
    with pytest.raises(AssertionError, match="TIMED OUT"):
        result.check_exit()


def _deadlock_hang(line: int) -> Hang:
    """deadlock.py's hang as a page would declare it: every rank blocked on ``line``."""
    where = (PLANTED / "deadlock.py").read_text().splitlines()[line - 1].split("#")[0].strip()
    return Hang("deadlock.py", (BlockedIn("other ranks", where, line),), world_size=2)


needs_py_spy = pytest.mark.skipif(not (VENV_BIN / "py-spy").is_file(), reason=f"Requires: [py-spy] ({VENV_BIN})")


@needs_py_spy
@pytest.mark.parametrize("bare", [True, False], ids=["bare", "harness"])
def test_a_hang_seen_where_declared_is_stopped_early_with_every_stack(tmp_path, bare):
    shutil.copy(PLANTED / "deadlock.py", tmp_path / "deadlock.py")
    line = "torchrun --standalone --nproc-per-node=2 deadlock.py"
    result = (run_bare if bare else run_job)(line, tmp_path, EARLY_LIMIT_S, hang=_deadlock_hang(8))
    assert result.timed_out and result.returncode is None and result.hang is not None
    assert result.hang.settled_s >= SETTLE_S
    assert result.duration_s < EARLY_LIMIT_S, result.report()
    assert result.leftovers == []
    assert sorted(who for who, _ in result.hang.stacks) == ["rank 0", "rank 1"]
    report = result.report()
    assert "TIMED OUT: stopped after" in report and report.count("py-spy dump ===") == 2
    assert report.count("<module> (deadlock.py:8)") == 2, report
    if not bare:  # the harness run still dumps every rank's stack into its log, as at the limit
        assert pids_alive(worker_pids(result)) == []
        assert all('deadlock.py", line 8' in r.stderr for r in result.ranks)


@needs_py_spy
def test_a_hang_seen_elsewhere_than_declared_waits_out_the_limit(tmp_path):
    """Declared on the line after the real hang: never seen there, so never stopped early."""
    shutil.copy(PLANTED / "deadlock.py", tmp_path / "deadlock.py")
    limit = SETTLE_S + 12
    result = run_bare("torchrun --standalone --nproc-per-node=2 deadlock.py", tmp_path, limit, hang=_deadlock_hang(9))
    assert result.timed_out and result.hang is None
    assert result.duration_s >= limit
    assert result.leftovers == []
    assert "TIMED OUT after" in result.report()


def test_a_crashing_rank_fails_the_job_and_is_reported_first(tmp_path):
    result = _run(tmp_path, "crash.py")
    assert not result.timed_out
    assert result.returncode != 0  # SIGABRT or exit 1: only "non-zero" is reliable
    assert result.duration_s < LIMIT_S
    assert pids_alive(worker_pids(result)) == []
    report = result.report()
    first = report.index("=== first failing: local rank 1")
    assert report.index("planted crash on rank 1") > first
    assert first < report.index("=== local rank 0, attempt 0: stdout ===")
    with pytest.raises(AssertionError):
        result.check(world_size=2)


def test_exiting_zero_without_doing_the_work_is_not_a_pass(tmp_path):
    result = _run(tmp_path, "no_work.py")
    assert result.returncode == 0
    with pytest.raises(AssertionError, match=r"no record from rank\(s\) \[0, 1\]|never reached destroy_process_group"):
        result.check(world_size=2)


def test_a_gloo_thread_left_at_exit_fails_a_harness_run_that_exited_zero(tmp_path):
    """Lesson 4's teardown claim, as every harness run of a passing program checks it
    (``JobResult.check_exit``): the planted program pins its group and still exits 0."""
    result = _run(tmp_path, "pinned_group.py")
    assert sorted(result.records) == [0, 1]
    with pytest.raises(AssertionError) as failed:
        result.check(world_size=2)
    if result.returncode == 0:  # else the interpreter's shutdown aborted, now and then, as the lesson says
        assert re.search(r"rank 0: gloo threads \[.*pt_gloo_runloop.*\] were still running", str(failed.value))


@pytest.mark.parametrize("bare", [True, False], ids=["bare", "harness"])
def test_a_process_that_outlives_a_job_is_found_killed_and_fails_it(tmp_path, bare):
    result = _run(tmp_path, "orphan.py", bare=bare)
    assert result.returncode == 0  # torchrun itself saw nothing wrong
    assert len(result.leftovers) == 1  # found by its working folder: it has no parent and no pid file
    assert pids_alive(result.leftovers) == []
    with pytest.raises(AssertionError, match="processes left running"):
        result.check_exit()


def _printed_names(result) -> set[str]:
    text = result.stdout_text if result.bare else "".join(r.stdout for r in result.ranks)
    return {line.removeprefix("env ") for line in text.splitlines() if line.startswith("env ")}


@pytest.mark.parametrize("bare", [True, False], ids=["bare", "harness"])
def test_a_job_gets_the_page_s_variables_and_nothing_from_the_test_s_shell(tmp_path, bare, monkeypatch):
    monkeypatch.setenv("COURSE_SHOULD_NOT_LEAK", "1")  # as if exported in the developer's shell
    shutil.copy(PLANTED / "print_env.py", tmp_path / "print_env.py")
    line = parse_line("PAGE_VARIABLE=1 torchrun --standalone --nproc-per-node=2 print_env.py")
    result = (run_bare if bare else run_job)(line, tmp_path, LIMIT_S)
    result.check_exit()
    names = _printed_names(result)
    observation = set() if bare else set(OBSERVATION_ENV)
    assert names - _TORCHRUN_SETS == {"PATH", "PAGE_VARIABLE"} | observation
    assert set(result.env) == {"PATH"} | observation


def test_a_variable_that_is_not_on_the_page_is_refused():
    line = parse_line("torchrun --standalone --nproc-per-node=2 train.py")
    check_page_env(line, {"PATH": "/usr/bin"}, observation=False)
    check_page_env(line, {"PATH": "/usr/bin", "CUDA_VISIBLE_DEVICES": ""}, observation=False)
    with pytest.raises(PageEnvironmentError, match=r"\['GLOO_SOCKET_IFNAME'\], which its page does not show"):
        check_page_env(line, {"PATH": "/usr/bin", "GLOO_SOCKET_IFNAME": "lo"}, observation=False)
    with pytest.raises(PageEnvironmentError):
        check_page_env(line, {"PATH": "/usr/bin", "PYTHONPATH": "x"}, observation=False)  # harness only
    check_page_env(parse_line("GLOO_SOCKET_IFNAME=lo torchrun x.py"), {"PATH": "/usr/bin", "GLOO_SOCKET_IFNAME": "lo"},
                   observation=False)


def test_every_program_s_launch_line_and_the_runner_s_environment_agree(tmp_path):
    """For every program: the variables a job may get beyond PATH, device selection and
    the harness's observation are exactly those its launch lines set or read."""
    for program in sorted(SNIPPETS.glob("*/*.py")):
        spec = read_spec(program)
        for line in spec.lines:
            env = {"PATH": "/usr/bin", **dict(line.env)}
            check_page_env(line, env, observation=False)
            check_page_env(line, {**env, **{name: "" for name in OBSERVATION_ENV}}, observation=True)
            page = {name for name, _ in line.env} | line.variables
            assert set(env) - {"PATH"} <= page, program
            # nothing the harness or the hardware selection adds can hide in a launch line
            assert not (OBSERVATION_ENV | HARDWARE_ENV) & {name for name, _ in line.env}, program


def test_a_bare_folder_holds_the_program_and_its_local_imports_only(tmp_path):
    folder = bare_folder(SNIPPETS / "ddp_basics" / "train.py", tmp_path / "bare")
    assert sorted(p.name for p in folder.iterdir()) == ["train.py"]
