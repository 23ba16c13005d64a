"""pytest plugin: Slurm for the tests, a local cluster or a maintainer's.

* The ``slurm_cluster`` fixture (session scope) gives a :class:`slurm_cluster.Cluster`
  and registers it with the runner (``torchjob.SLURM``), so a launch line that submits a
  batch script (``sbatch slurm_train.sbatch``) goes to it. Without an option it starts a
  real two-node cluster on this machine (``slurm_cluster.LocalCluster``) the first time a
  test asks, and stops it at the end of the session, failing the session's last test
  report if anything of it was left running. Where Slurm cannot run here it skips with
  the reason (``Requires: [slurmctld + munge] (...)``); under CI (``CI=true``) it fails.
* ``--slurm-partition NAME`` runs the whole suite on a Slurm cluster: every program's
  launch is submitted as a job on partition NAME of the cluster that Slurm's commands
  reach (the site's ``slurm.conf``, or ``SLURM_CONF``), with one node per terminal of the
  launch and GPUs per node when the program runs on CUDA there; the same tests check
  the jobs, and the records say ``launcher: "slurm"``. Run it from a folder every node
  can read, with ``--basetemp`` on shared storage too (the jobs' folders live there).
  A test that acts on a job from the tests' machine (kills a worker, runs py-spy on it,
  probes its ports, starts two jobs to clash on one host) calls
  :func:`require_this_machine` and is skipped there, saying why.
* ``--slurm-local`` does the same on the local two-node cluster, started once for the
  whole session (under xdist by the controller, which hands its configuration to the
  workers): the end-to-end check of ``--slurm-partition`` on a machine without a cluster.

At the end, the terminal summary reports the cluster's start-up time and each job's
time from submission to running and from running to its end (the Slurm overhead), over
every xdist worker.
"""
from __future__ import annotations

import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import pytest

import torchjob
from slurm_cluster import Cluster, LocalCluster, SlurmError, unavailable
from slurm_launcher import SlurmBackend

_STATE: dict = {"cluster": None, "owned": None, "stopped": None, "timings": [], "startups": []}


def pytest_addoption(parser):
    group = parser.getgroup("course", "snippet verification")
    group.addoption("--slurm-partition", default=None, metavar="NAME",
                    help="run every program's launch as a Slurm job on this partition of the cluster Slurm's commands "
                         "reach (SLURM_CONF or the site's slurm.conf); records say launcher 'slurm'")
    group.addoption("--slurm-local", action="store_true", default=False,
                    help="like --slurm-partition, on a two-node Slurm cluster this session starts on this machine")


def _ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _wraps(config) -> bool:
    return bool(config.getoption("--slurm-partition") or config.getoption("--slurm-local"))


def require_this_machine(config, what: str) -> None:
    """Skip the calling test or fixture under ``--slurm-partition``: it acts on a job's
    processes or ports from the machine the tests run on (``what`` says how), and on a
    cluster they run on the cluster's nodes. Under ``--slurm-local`` the nodes are this
    machine, so it runs.

    Raises:
        pytest.skip.Exception: under ``--slurm-partition``, with the reason.
    """
    if config.getoption("--slurm-partition"):
        pytest.skip(f"acts on the job from the tests' own machine ({what}); a cluster runs it on its nodes: "
                    f"run this test without --slurm-partition, or with --slurm-local")


def _start_local(root: Path) -> LocalCluster:
    os.chmod(root, 0o755)  # mkdtemp's 0700 would hide munged's socket from the job's users
    reason = unavailable()
    if reason is not None:
        raise SlurmError(reason)
    cluster = LocalCluster(root / "slurm-cluster").start()
    _STATE["owned"] = cluster
    _STATE["startups"].append(cluster.startup_s)
    return cluster


def _register(cluster: Cluster, wraps: bool) -> Cluster:
    _STATE["cluster"] = cluster
    torchjob.SLURM = SlurmBackend(cluster, wraps=wraps)
    return cluster


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    """With --slurm-local in the controller (or a run without xdist), start the cluster
    now, before any worker starts; workers attach through their workerinput."""
    worker = getattr(config, "workerinput", None)
    partition = config.getoption("--slurm-partition")
    if worker is not None and worker.get("slurm_conf"):
        _register(Cluster({"SLURM_CONF": worker["slurm_conf"]}, worker["slurm_partition"]), wraps=True)
    elif partition:
        # the maintainer's cluster, found as their own commands find it: SLURM_CONF if set,
        # else the site's slurm.conf (the client commands run with only PATH and these)
        found = {name: os.environ[name] for name in torchjob.CLUSTER_ENV if name in os.environ}
        _register(Cluster(found, partition), wraps=True)
    elif config.getoption("--slurm-local") and worker is None:
        folder = Path(tempfile.mkdtemp(prefix="course-slurm-"))
        try:
            _register(_start_local(folder), wraps=True)
        except SlurmError as exc:
            raise pytest.UsageError(f"--slurm-local: {exc}") from None


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """xdist controller: give each worker the cluster it started (--slurm-local)."""
    owned = _STATE["owned"]
    if owned is not None:
        node.workerinput["slurm_conf"] = owned.env["SLURM_CONF"]
        node.workerinput["slurm_partition"] = owned.partition


@pytest.fixture(scope="session")
def slurm_cluster(tmp_path_factory) -> Cluster:
    """The session's Slurm cluster: the one the options chose, else a local two-node
    cluster started now (skipped where this machine cannot run one; failed under CI)."""
    if _STATE["cluster"] is not None:
        return _STATE["cluster"]
    reason = unavailable()
    if reason is not None:
        if _ci():
            pytest.fail(f"{reason}; CI installs Slurm through tests/system-deps.sh", pytrace=False)
        pytest.skip(reason)
    # a short path: Slurm and munge put sockets and pid files in it
    folder = Path(tempfile.mkdtemp(prefix="course-slurm-"))
    return _register(_start_local(folder), wraps=False)


def _stop_owned() -> None:
    owned = _STATE["owned"]
    if owned is None:
        return
    started = time.monotonic()
    _STATE["timings"] += [vars(t) for t in owned.timings]
    try:
        left = owned.stop(check=False)
    finally:
        _STATE["owned"] = None
        torchjob.SLURM = None
    if not left:  # keep the configuration and logs only when something went wrong
        shutil.rmtree(owned.folder.parent, ignore_errors=True)
    _STATE["stopped"] = {"stop_s": time.monotonic() - started, "left": left}


@pytest.hookimpl(trylast=True)  # after verification_plugin has written records that ask on_slurm()
def pytest_sessionfinish(session, exitstatus):
    if _STATE["cluster"] is not None and _STATE["owned"] is None:
        _STATE["timings"] += [vars(t) for t in _STATE["cluster"].timings]  # a maintainer's cluster
    _stop_owned()
    stopped = _STATE["stopped"]
    if stopped and stopped["left"]:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        print(f"\nlocal Slurm cluster: processes left after its stop (killed): {stopped['left']}")
    worker_output = getattr(session.config, "workeroutput", None)
    if worker_output is not None:
        worker_output["slurm"] = {"timings": _STATE["timings"], "startups": _STATE["startups"],
                                  "stopped": [_STATE["stopped"]] if _STATE["stopped"] else []}


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """After each test: cancel any job it submitted but never followed to its end (it
    failed in between), so the job does not hold a node for the tests after it."""
    try:
        return (yield)
    finally:
        if torchjob.SLURM is not None:
            cancelled = torchjob.SLURM.cancel_unfinished()
            if cancelled:
                item.add_report_section("teardown", "slurm", f"cancelled jobs this test left unfollowed: {cancelled}")


_GATHERED: dict = {"timings": [], "startups": [], "stopped": []}


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    data = getattr(node, "workeroutput", {}).get("slurm")
    if data:
        for key in _GATHERED:
            _GATHERED[key] += data[key]


def _summary(values: list[float]) -> str:
    return f"median {statistics.median(values):.1f} s, max {max(values):.1f} s" if values else "-"


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    timings = _GATHERED["timings"] + _STATE["timings"]
    startups = _GATHERED["startups"] + _STATE["startups"]
    stopped = _GATHERED["stopped"] + ([_STATE["stopped"]] if _STATE["stopped"] else [])
    if not (timings or startups):
        return
    tr = terminalreporter
    tr.section("Slurm overhead")
    if startups:
        tr.write_line(f"local cluster start-up (munged, slurmctld, 2 slurmd, until sinfo shows them idle): "
                      + ", ".join(f"{s:.1f} s" for s in startups))
    if stopped:
        tr.write_line("local cluster stop (cancel, SIGTERM each daemon, leftover check): "
                      + ", ".join(f"{s['stop_s']:.1f} s{' LEFT ' + str(s['left']) if s['left'] else ''}" for s in stopped))
    queued = [t["queued_s"] for t in timings if t.get("queued_s") is not None]
    run = [t["run_s"] for t in timings if t.get("run_s") is not None]
    tr.write_line(f"{len(timings)} jobs: submitted -> running {_summary(queued)}; running -> ended {_summary(run)}")
