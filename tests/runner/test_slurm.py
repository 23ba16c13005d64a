"""The Slurm side of the runner: the local test cluster starts and stops cleanly, jobs are
followed by polling, and the whole suite runs as Slurm jobs with one option."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from conftest import ROOT, copy_project
from slurm_cluster import Cluster, LocalCluster, parse_job, queued_since, slurm_queue_s, unavailable

pytestmark = pytest.mark.torchrun


@pytest.fixture
def needs_slurm():
    reason = unavailable()
    if reason is not None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"{reason}; CI installs Slurm through tests/system-deps.sh", pytrace=False)
        pytest.skip(reason)


def test_a_job_line_of_scontrol_is_read():
    line = ("JobId=7 JobName=slurm-train UserId=root(0) JobState=FAILED Reason=NonZeroExitCode ExitCode=1:0 "
            "NodeList=n[1-2] StdOut=/tmp/x/slurm-train-7.out")
    job = parse_job(line)
    assert (job.job_id, job.state, job.exit_code, job.signal, job.done) == (7, "FAILED", 1, 0, True)
    assert job.fields["NodeList"] == "n[1-2]" and job.fields["StdOut"] == "/tmp/x/slurm-train-7.out"
    assert not parse_job("JobId=8 JobState=PENDING ExitCode=0:0").done


def test_the_first_poll_past_pending_records_the_queue_time_for_every_view():
    cluster = Cluster()  # observe() runs no Slurm command
    pending = parse_job("JobId=5 JobState=PENDING ExitCode=0:0")
    running = parse_job("JobId=5 JobState=RUNNING ExitCode=0:0 SubmitTime=2026-12-03T11:40:00 "
                        "StartTime=2026-12-03T11:40:09")
    assert cluster.observe(5, None, 100.0, False, now=100.5) is False  # unknown: nothing learnt
    assert cluster.observe(5, None, 100.0, True, now=100.5) is True
    assert cluster.observe(5, pending, 100.0, False, now=101.0) is True
    assert cluster.timing(5).queued_s is None
    assert cluster.observe(5, running, 100.0, True, now=102.5) is True
    assert cluster.timing(5).queued_s == 2.5  # the poller's reading, not Slurm's 9 s
    assert cluster.observe(5, running, 100.0, False, now=160.0) is False  # another view, later
    assert cluster.timing(5).queued_s == 2.5  # the first reading stays
    unwatched = Cluster()  # first seen already running, 60 s on: Slurm's own 9 s
    assert unwatched.observe(5, running, 100.0, False, now=160.0) is False
    assert unwatched.timing(5).queued_s == 9.0


def test_a_job_first_seen_running_has_slurm_s_queue_time_not_its_age():
    running = parse_job("JobId=9 JobState=RUNNING ExitCode=0:0 SubmitTime=2026-12-03T11:40:00 "
                        "StartTime=2026-12-03T11:40:02")
    # first seen running 45 s after sbatch returned: it queued 2 s, then ran unwatched
    assert slurm_queue_s(running) == 2.0
    assert queued_since(running, submitted=100.0, now=145.0, seen_pending=False) == 2.0
    # seen pending before: the poller's own reading is the finer one
    assert queued_since(running, submitted=100.0, now=101.4, seen_pending=True) == pytest.approx(1.4)
    unknown = parse_job("JobId=9 JobState=RUNNING ExitCode=0:0 SubmitTime=2026-12-03T11:40:00 StartTime=Unknown")
    assert slurm_queue_s(unknown) is None and queued_since(unknown, 100.0, 103.0, False) == 3.0


@pytest.fixture
def open_tmp():
    """A short temporary folder that every user can enter: munged refuses a socket under
    a folder that is not world-executable, and pytest's own base folder is 0700."""
    folder = Path(tempfile.mkdtemp(prefix="course-slurm-test-"))
    os.chmod(folder, 0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_the_local_cluster_starts_twice_and_stops_with_nothing_left(needs_slurm, open_tmp):
    tmp_path = open_tmp
    for attempt in range(2):
        cluster = LocalCluster(tmp_path / "cluster").start()
        try:
            assert cluster.node_states() == {"n1": "idle", "n2": "idle"}
            assert cluster.gpus_per_node() == 0
            out = cluster.run("sbatch", "--parsable", "--nodes=2", "--ntasks-per-node=1",
                              f"--output={tmp_path}/hostname-%j.out", "--wrap", "srun printenv SLURMD_NODENAME").stdout
            job_id = int(out.strip())
            assert job_id == 1, "a fresh controller state starts job ids at 1"
            state = cluster.wait(job_id, 60, submitted=time.monotonic())
            assert (state.state, state.exit_code) == ("COMPLETED", 0)
            assert sorted((tmp_path / f"hostname-{job_id}.out").read_text().split()) == ["n1", "n2"]
            assert cluster.timing(job_id).queued_s is not None
        finally:
            left = cluster.stop(check=False)
        assert left == [] and cluster.processes() == [], f"attempt {attempt}: left {left}"


def test_the_suite_runs_as_slurm_jobs_and_its_records_say_so(needs_slurm, tmp_path):
    """``pytest --slurm-local`` on a copy of the project: ddp_basics/train.py's launch
    line is submitted as a Slurm job, the same tests pass, and the record says Slurm."""
    (tmp_path / "project").mkdir()
    project = copy_project(tmp_path / "project", ("mkdocs.yml", "pyproject.toml", "snippets", "tests", "hooks"))
    from verification_plugin import machine_platform

    records = project / "snippets" / "verification" / f"{machine_platform()}.json"
    data = json.loads(records.read_text())
    del data["ddp_basics/train.py"]
    records.write_text(json.dumps(data))
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/root")}
    proc = subprocess.run([sys.executable, "-m", "pytest", "tests/snippets/test_ddp_basics", "--slurm-local",
                           "--bare-runs", "1", "-p", "no:xdist", "-p", "no:cacheprovider", "-q"],
                          cwd=project, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "Slurm overhead" in proc.stdout and "jobs: submitted -> running" in proc.stdout
    record = json.loads(records.read_text())["ddp_basics/train.py"]["cpu-gloo"]
    assert (record["launcher"], record["nnodes"], record["nproc_per_node"], record["backend"], record["device"]) == \
        ("slurm", 1, 2, "gloo", "cpu")
    assert record["bare_runs"] == 1 and record.get("checks", "claims") == "claims"  # the default is left out


def _pytest(args: list[str], env_extra: dict[str, str] | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run the project's own tests in a child pytest, as a maintainer types it."""
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/root"), **(env_extra or {})}
    return subprocess.run([sys.executable, "-m", "pytest", *args, "--no-record", "-p", "no:xdist",
                           "-p", "no:cacheprovider", "-q", "-rs"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)


def test_a_hanging_two_node_job_is_stopped_at_its_limit_on_both_nodes(needs_slurm):
    """multinode_standalone.py's two agents wait forever. Its bare run is one Slurm job of
    two nodes (``run_nodes``): both nodes' views of it must count as stopped at the limit,
    though the first view's stop cancels the job for both. Its other tests start two
    one-node jobs and find the agents' ports through their working folders."""
    proc = _pytest(["tests/snippets/test_torchrun_launching/test_multinode_standalone.py", "--slurm-local",
                    "--reverify", "--bare-runs", "1"])
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "4 passed" in proc.stdout, proc.stdout[-2000:]


def test_a_test_that_acts_on_the_job_from_this_machine_skips_on_a_cluster(needs_slurm, open_tmp):
    """Under --slurm-partition (here the local cluster reached through SLURM_CONF, as a
    site's cluster is) stuck.py's py-spy test skips, saying why, and submits nothing."""
    cluster = LocalCluster(open_tmp / "cluster").start()
    try:
        proc = _pytest(["tests/snippets/test_torchrun_launching/test_stuck.py", "--slurm-partition", cluster.partition,
                        "--reverify", "-k", "reaches_its_collective"], cluster.env)
        submitted = cluster.run("scontrol", "show", "job", "-o", check=False).stdout
    finally:
        left = cluster.stop(check=False)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "1 skipped" in proc.stdout and "acts on the job from the tests' own machine (py-spy" in proc.stdout, proc.stdout
    assert "JobId=" not in submitted and left == []
