"""snippets/torchrun_launching/slurm_train.py and its batch script slurm_train.sbatch,
submitted exactly as docs/torchrun-launching.md says to a real two-node Slurm cluster.

The cluster is the session's ``slurm_cluster`` (tests/slurm_plugin.py): by default two
``slurmd`` on this machine, started for the session and stopped at its end; with
``--slurm-partition`` a maintainer's. The page's line runs with ``bash -c`` in a folder
holding only the program and the script, with the reader's environment plus the
cluster's ``SLURM_CONF`` (which a site's users have, or its default path); the job is
followed by polling ``scontrol show job -o``. The "break it" runs below keep the page's
script and put a planted program in place of slurm_train.py.
"""
from __future__ import annotations

import re
import shutil
import time
from pathlib import Path

import pytest
import torch

from conftest import SNIPPETS, bare_run_test, run_snippet
from coursekit.runspec import batch_script, read_spec
from slurm_cluster import LocalCluster
from torchjob import _read_rank_logs, bare_folder, finish, launch

PROGRAM = SNIPPETS / "torchrun_launching" / "slurm_train.py"
SCRIPT = PROGRAM.with_suffix(".sbatch")
SPEC = read_spec(PROGRAM)
PLANTED = Path(__file__).resolve().parents[2] / "runner" / "planted"
_WHOAMI = re.compile(r"^rank (?P<rank>\d+) of (?P<size>\d+): local rank (?P<local>\d+) on node rank (?P<node>\d+); "
                     r"Slurm task (?P<task>\d+) of (?P<tasks>\d+) on (?P<host>\S+)$", re.M)
NODES, WORKERS = 2, 2  # the script's --nodes; two workers per node without GPUs

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("torchrun_launching/slurm_train.py")]


@pytest.fixture(scope="module")
def job(slurm_cluster, tmp_path_factory, pytestconfig):
    """The page's line once, with the harness: one Slurm job of two nodes."""
    return run_snippet(PROGRAM, tmp_path_factory, pytestconfig)


def _whoami(job) -> list[dict]:
    return [m.groupdict() for log in job.ranks for m in _WHOAMI.finditer(log.stdout)]


def test_the_spec_comes_from_the_script():
    batch = batch_script(SPEC.lines[0], PROGRAM.parent)
    assert (batch.path, batch.nodes, batch.nproc_per_node) == (SCRIPT, NODES, WORKERS)
    assert batch.torchrun[-1] == PROGRAM.name


def test_the_job_completes_and_passes_on_torchrun_s_exit_status(job):
    assert job.slurm_state == "COMPLETED" and job.returncode == 0, job.report()
    assert re.search(rf"^job {job.slurm_job_id}: torchrun exited with status 0 on the first node$", job.stdout_text, re.M)


def test_world_size_is_every_worker_of_every_node(job):
    lines = _whoami(job)
    assert len(lines) == len(job.records) == NODES * WORKERS == job.world_size
    assert {int(l["size"]) for l in lines} == {NODES * WORKERS}
    assert sorted(int(l["rank"]) for l in lines) == list(range(NODES * WORKERS))


def test_each_node_runs_a_block_of_ranks_with_local_ranks_from_zero(job):
    by_host: dict[str, list[dict]] = {}
    for line in _whoami(job):
        by_host.setdefault(line["host"], []).append(line)
    assert len(by_host) == NODES, by_host  # two Slurm nodes, one agent each
    node_ranks = set()
    for host, lines in by_host.items():
        assert sorted(int(l["local"]) for l in lines) == list(range(WORKERS)), host
        (node,) = {int(l["node"]) for l in lines}  # one node rank per agent
        node_ranks.add(node)
        for l in lines:
            assert int(l["rank"]) == node * WORKERS + int(l["local"])
    assert node_ranks == set(range(NODES))
    # one torchrun agent per node: one run folder per node under the script's --log-dir
    runs = {log.run for log in job.ranks}
    assert len(runs) == NODES and all(Path(r).parent == job.workdir / "logs" / str(job.slurm_job_id) for r in runs)


def test_torchrun_s_rank_is_not_slurm_s_task_id(job):
    lines = _whoami(job)
    # Slurm numbers its tasks: one per node, the torchrun agents; torchrun numbers the workers
    assert {int(l["tasks"]) for l in lines} == {NODES}
    tasks = sorted(int(l["task"]) for l in lines)
    assert tasks == sorted(list(range(NODES)) * WORKERS)
    # every worker of an agent shares its Slurm task id, while each has its own rank
    by_task = {}
    for l in lines:
        by_task.setdefault(l["task"], set()).add(int(l["rank"]))
    assert all(len(ranks) == WORKERS for ranks in by_task.values())


def test_all_ranks_end_with_identical_parameters(job):
    states = [rec["final_state"] for rec in job.records.values()]
    assert len(states) == NODES * WORKERS and states[0] is not None
    for other in states[1:]:
        for name in states[0]:
            assert torch.equal(states[0][name], other[name]), name
    before = job.records[0]["first_step"]["before"]
    assert any(not torch.equal(before[n], states[0][n]) for n in before)  # it trained


def test_each_rank_has_its_own_log_and_its_lines_in_the_job_output(job):
    assert sorted((log.rank, log.attempt) for log in job.ranks) == [(r, 0) for r in range(NODES * WORKERS)]
    for log in job.ranks:
        for line in log.stdout.splitlines():
            assert f"[{log.rank}]:{line}" in job.stdout_text.splitlines()


def _planted_run(cluster, tmp_path: Path, planted: str, limit_s: float):
    """The page's script and line, with a planted program as slurm_train.py."""
    folder = bare_folder(PROGRAM, tmp_path / "job")
    shutil.copy(PLANTED / planted, folder / PROGRAM.name)
    started = time.monotonic()
    return launch(SPEC.lines[0], folder, bare=True), started


def test_a_failing_worker_fails_the_job_with_its_exit_status(slurm_cluster, tmp_path):
    launched, started = _planted_run(slurm_cluster, tmp_path, "crash.py", SPEC.time_limit_s)
    result = finish(launched, SPEC.time_limit_s, started)
    assert not result.timed_out and result.slurm_state == "FAILED", result.report()
    assert result.returncode not in (0, None)
    assert re.search(r"torchrun exited with status [1-9]", result.stdout_text), result.report()
    assert not result.leftovers, result.report()


def test_scancel_stops_a_hanging_job_on_every_node_with_nothing_left(slurm_cluster, tmp_path):
    launched, started = _planted_run(slurm_cluster, tmp_path, "ring_hang.py", SPEC.time_limit_s)
    job_id = launched.popen.slurm_job_id
    deadline = started + SPEC.time_limit_s
    # the per-rank logs: the agent's copy in the job's output file is buffered until it exits
    waiting = lambda: sum("waiting in recv" in log.stdout for log in _read_rank_logs(launched.cwd / "logs"))
    try:
        while waiting() < NODES * WORKERS and time.monotonic() < deadline:
            time.sleep(0.2)
        assert waiting() == NODES * WORKERS, "not every rank reached the hang"
        assert slurm_cluster.job(job_id).state == "RUNNING"
    except BaseException:
        finish(launched, 0, started)  # cancels it: a failed test leaves no job behind either
        raise
    cancelled = time.monotonic()
    slurm_cluster.run("scancel", str(job_id))  # what the page tells the reader to type
    result = finish(launched, SPEC.time_limit_s, started)
    stopped_s = time.monotonic() - cancelled
    assert result.slurm_state == "CANCELLED", result.report()
    assert not result.timed_out and not result.leftovers, result.report()
    assert stopped_s < 30, f"scancel took {stopped_s:.1f} s"
    if isinstance(slurm_cluster, LocalCluster):  # every process of the cluster but its daemons is gone
        daemons = {d.popen.pid for d in slurm_cluster.daemons}
        assert [p.pid for p in slurm_cluster.processes() if p.pid not in daemons] == []


# Which node becomes node rank 0 is the rendezvous's choice, so the lines that pair
# ranks with Slurm's nodes differ between runs: there is no fixed output to reproduce.
test_bare_run = bare_run_test(PROGRAM, reference=None, harness_run="job", untangle_with="job", stdout=(
    r"^\[3\]:rank 3 of 4: local rank 1 on node rank 1; Slurm task [01] of 2 on \S+$",
    r"^\[0\]:epoch 1: loss \d", r"torchrun exited with status 0 on the first node$"))
