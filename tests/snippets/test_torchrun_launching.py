"""The programs of docs/torchrun-launching.md, each launched exactly as the page says.

One test class per program:

* ``env_report.py``: two ``--standalone`` jobs side by side; what torchrun gave each
  worker, read from what the worker printed and from the harness records.
* ``multinode_train.py``: two torchrun agents on this machine act as two nodes that
  meet at a c10d rendezvous on 127.0.0.1 and a free port.
* ``elastic_train.py``: one worker is killed in the middle of training; torchrun
  restarts the workers and they carry on from the last checkpoint. An uninterrupted run
  of the same command is the reference.

Every job uses loopback addresses only and is bounded by its program's time limit.
"""
from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path

import pytest
import torch

from conftest import SNIPPETS, copy_snippet, import_program
from coursekit.runspec import read_spec
from coursekit.net import free_port
from torchjob import JobResult, expand_vars, finish, launch, pids_alive, run_job, run_nodes, worker_pids
from coursekit.runspec import torchrun_shape
from verification_plugin import effective_command, job_env

FOLDER = SNIPPETS / "torchrun_launching"
# Keep every connection on the loopback interface, whatever this machine's hostname
# resolves to: the store and the backends' own sockets.
LOOPBACK_ENV = {"GLOO_SOCKET_IFNAME": "lo", "NCCL_SOCKET_IFNAME": "lo"}

pytestmark = [pytest.mark.torchrun]


def _scratch(program: Path, tmp_path_factory, name: str) -> Path:
    """A scratch copy of the program's folder; returns the copied program."""
    return copy_snippet(program, tmp_path_factory.mktemp(name))


# ---------------------------------------------------------------------------------------
# env_report.py: what torchrun gives every worker

ENV_REPORT = FOLDER / "env_report.py"
ENV_REPORT_SPEC = read_spec(ENV_REPORT)
env_report = import_program(ENV_REPORT)
# the variables the page says torchrun sets for every worker
PAGE_VARIABLES = {"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "MASTER_ADDR", "MASTER_PORT",
                  "TORCHELASTIC_RESTART_COUNT", "TORCHELASTIC_MAX_RESTARTS", "TORCHELASTIC_RUN_ID"}
_GIVEN = re.compile(r"^pid (?P<pid>\d+): (?P<pairs>.*)$", re.M)
_GROUP = re.compile(r"^process group: rank (?P<rank>\d+) of (?P<size>\d+), backend (?P<backend>\w+)$", re.M)


def _reports(result: JobResult) -> list[dict]:
    """Per worker: its pid, the variables it printed, and the process group's view."""
    out = []
    for log in result.ranks:
        given, group = _GIVEN.search(log.stdout), _GROUP.search(log.stdout)
        assert given and group, f"local rank {log.local_rank} printed no report\n{result.report()}"
        variables = dict(pair.split("=", 1) for pair in given["pairs"].split(" "))
        out.append({"pid": int(given["pid"]), "env": variables,
                    "group_rank": int(group["rank"]), "group_size": int(group["size"]), "log": log})
    return out


@pytest.fixture(scope="module")
def env_jobs(tmp_path_factory, pytestconfig) -> list[JobResult]:
    """The page's command, twice at the same time on this machine."""
    argv = effective_command(ENV_REPORT_SPEC, pytestconfig)
    nproc, nnodes = torchrun_shape(argv)
    env = {**job_env(nproc), **LOOPBACK_ENV}
    cwds = [_scratch(ENV_REPORT, tmp_path_factory, f"env_report_{i}").parent for i in range(2)]
    started = time.monotonic()
    popens = [launch(argv, cwd, env) for cwd in cwds]
    results = [finish(p, argv, cwd, ENV_REPORT_SPEC.time_limit_s, started) for p, cwd in zip(popens, cwds)]
    for result in results:
        result.world_size = nproc * nnodes
        result.check(result.world_size)
    return results


@pytest.mark.verifies("torchrun_launching/env_report.py")
class TestEnvReport:
    def test_one_worker_process_per_slot(self, env_jobs):
        for job in env_jobs:
            assert job.world_size >= 2
            reports = _reports(job)
            assert len(reports) == job.world_size
            pids = sorted(r["pid"] for r in reports)
            assert len(set(pids)) == job.world_size  # separate processes
            assert pids == sorted(worker_pids(job))
            assert pids_alive(pids) == []  # and torchrun waited for all of them

    def test_every_worker_gets_the_variables_the_page_lists(self, env_jobs):
        for job in env_jobs:
            for report in _reports(job):
                assert set(report["env"]) == set(env_report.TORCHRUN_VARIABLES)
                assert PAGE_VARIABLES <= set(report["env"])
                assert all(report["env"][name] for name in PAGE_VARIABLES)

    def test_ranks_local_ranks_and_world_size(self, env_jobs):
        for job in env_jobs:
            reports = _reports(job)
            n = job.world_size
            assert sorted(int(r["env"]["RANK"]) for r in reports) == list(range(n))
            assert sorted(int(r["env"]["LOCAL_RANK"]) for r in reports) == list(range(n))
            for r in reports:
                env = r["env"]
                assert int(env["LOCAL_RANK"]) == r["log"].local_rank  # torchrun's log folder agrees
                assert int(env["RANK"]) == int(env["LOCAL_RANK"])  # one node: the same numbers
                assert int(env["WORLD_SIZE"]) == int(env["LOCAL_WORLD_SIZE"]) == n
                assert env["GROUP_RANK"] == "0"
                # init_process_group took its rank and world size from these variables
                assert (r["group_rank"], r["group_size"]) == (int(env["RANK"]), n)
                assert job.records[int(env["RANK"])]["local_rank"] == int(env["LOCAL_RANK"])

    def test_all_workers_of_a_job_share_one_store_address_and_run_id(self, env_jobs):
        for job in env_jobs:
            envs = [r["env"] for r in _reports(job)]
            for name in ("MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RUN_ID"):
                assert len({env[name] for env in envs}) == 1, name
            assert all(env["TORCHELASTIC_RESTART_COUNT"] == "0" for env in envs)
            assert all(env["TORCHELASTIC_MAX_RESTARTS"] == "0" for env in envs)  # the default

    def test_standalone_jobs_side_by_side_get_their_own_port(self, env_jobs):
        first, second = ({r["env"]["MASTER_PORT"] for r in _reports(job)} for job in env_jobs)
        assert first.isdisjoint(second)
        ids = [{r["env"]["TORCHELASTIC_RUN_ID"] for r in _reports(job)} for job in env_jobs]
        assert ids[0].isdisjoint(ids[1])


# ---------------------------------------------------------------------------------------
# multinode_train.py: two nodes, one torchrun agent each

MULTINODE = FOLDER / "multinode_train.py"
MULTINODE_SPEC = read_spec(MULTINODE)
_WHOAMI = re.compile(r"^node (?P<node>\d+), local rank (?P<local>\d+): rank (?P<rank>\d+) of (?P<size>\d+) on ", re.M)


def _node_envs(nproc: int, nnodes: int) -> list[dict[str, str]]:
    """Per node: its own GPUs when there are enough for every process of every node,
    else none (the job then runs on CPU and gloo, like job_env does for one node)."""
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if job_env(nproc) or count == 0:
        return [dict(job_env(nproc)) for _ in range(nnodes)]
    if count < nproc * nnodes:
        return [{"CUDA_VISIBLE_DEVICES": ""} for _ in range(nnodes)]
    return [{"CUDA_VISIBLE_DEVICES": ",".join(str(node * nproc + i) for i in range(nproc))} for node in range(nnodes)]


@pytest.fixture(scope="module")
def nodes(tmp_path_factory, pytestconfig) -> list[JobResult]:
    """The page's command on each of two 'nodes': two agents, each in its own copy
    of the folder, meeting at a c10d rendezvous on 127.0.0.1 and a free port."""
    page_argv = effective_command(MULTINODE_SPEC, pytestconfig)
    nproc, nnodes = torchrun_shape(page_argv)
    assert nnodes == 2
    # the values a reader sets on a real cluster; here: this machine, a free port
    argv = expand_vars(page_argv, {"HEAD_ADDR": "127.0.0.1", "HEAD_PORT": str(free_port()),
                                   "JOB_ID": f"lesson4-{os.getpid()}"})
    assert "--rdzv-backend=c10d" in argv and any(a.startswith("--rdzv-endpoint=127.0.0.1:") for a in argv)
    cwds = [_scratch(MULTINODE, tmp_path_factory, f"node{i}").parent for i in range(nnodes)]
    # PET_LOCAL_ADDR is torchrun's --local-addr: the address this node tells the others
    env = {**LOOPBACK_ENV, "PET_LOCAL_ADDR": "127.0.0.1"}
    results = run_nodes([argv] * nnodes, cwds, MULTINODE_SPEC.time_limit_s, env, node_envs=_node_envs(nproc, nnodes))
    for result in results:
        result.world_size = nproc * nnodes
        result.check_exit()
    return results


@pytest.mark.verifies("torchrun_launching/multinode_train.py")
class TestTwoNodes:
    def test_world_size_is_every_process_of_every_node(self, nodes):
        world_size = sum(len(node.ranks) for node in nodes)
        assert world_size == 4 == nodes[0].world_size
        for node in nodes:
            for rank, rec in node.records.items():
                assert rec["world_size"] == world_size
                assert rec["destroyed"], f"rank {rank} never reached destroy_process_group"

    def test_global_ranks_are_each_taken_once(self, nodes):
        per_node = [sorted(node.records) for node in nodes]
        assert all(len(ranks) == 2 for ranks in per_node)
        assert sorted(r for ranks in per_node for r in ranks) == [0, 1, 2, 3]
        printed = sorted(int(m["rank"]) for node in nodes for log in node.ranks for m in _WHOAMI.finditer(log.stdout))
        assert printed == [0, 1, 2, 3]

    def test_local_ranks_start_at_zero_on_each_node(self, nodes):
        for node in nodes:
            assert sorted(rec["local_rank"] for rec in node.records.values()) == [0, 1]

    def test_each_node_gets_its_node_rank_and_a_block_of_global_ranks(self, nodes):
        seen = set()
        for node in nodes:
            lines = [m for log in node.ranks for m in _WHOAMI.finditer(log.stdout)]
            assert len(lines) == 2
            (group,) = {int(m["node"]) for m in lines}  # one node rank per agent
            seen.add(group)
            for m in lines:
                assert int(m["rank"]) == group * 2 + int(m["local"])
                assert int(m["size"]) == 4
        assert seen == {0, 1}

    def test_all_four_ranks_end_with_identical_parameters(self, nodes):
        states = [rec["final_state"] for node in nodes for rec in node.records.values()]
        assert len(states) == 4 and states[0] is not None
        for other in states[1:]:
            assert states[0].keys() == other.keys()
            for name in states[0]:
                assert torch.equal(states[0][name], other[name]), name
        before = nodes[0].records[min(nodes[0].records)]["first_step"]["before"]
        assert any(not torch.equal(before[n], states[0][n]) for n in before)  # it trained


# ---------------------------------------------------------------------------------------
# elastic_train.py: a worker dies, torchrun restarts the workers, training resumes

ELASTIC = FOLDER / "elastic_train.py"
ELASTIC_SPEC = read_spec(ELASTIC)
elastic = import_program(ELASTIC)
# The page tells readers to set this for restarts (torch 2.13): without it the restarted
# workers can read the previous attempt's gloo addresses from the store torchrun shares
# with them, and fail with "Connection refused" or hang.
ELASTIC_ENV = {"TORCH_DISABLE_SHARE_RDZV_TCP_STORE": "1"}
KILL_AFTER_EPOCH = 1  # kill a worker once this epoch's checkpoint is saved
_EPOCH_LINE = re.compile(r"^epoch (?P<epoch>\d+): loss (?P<loss>[\d.]+), checkpoint saved$", re.M)
_START_LINE = re.compile(r"^restart (?P<restart>\d+): starting at epoch (?P<epoch>\d+) of (?P<epochs>\d+)$", re.M)


def _saved_epochs(stdout: str) -> list[int]:
    return [int(m["epoch"]) for m in _EPOCH_LINE.finditer(stdout)]


@pytest.fixture(scope="module")
def elastic_runs(tmp_path_factory, pytestconfig) -> dict:
    """The page's command twice: once with a worker killed mid-training, once left alone."""
    argv = effective_command(ELASTIC_SPEC, pytestconfig)
    nproc, nnodes = torchrun_shape(argv)
    assert "--max-restarts=1" in argv
    env = {**job_env(nproc), **LOOPBACK_ENV, **ELASTIC_ENV}
    limit = ELASTIC_SPEC.time_limit_s
    victim_rank = nproc * nnodes - 1

    cwd = _scratch(ELASTIC, tmp_path_factory, "elastic").parent
    started = time.monotonic()
    popen = launch(argv, cwd, env)
    job_dir = cwd / ".job"
    victim = None
    while popen.poll() is None and time.monotonic() - started < limit:
        log = next(job_dir.glob("logs/*/attempt_0/0/stdout.log"), None)
        if log is not None and KILL_AFTER_EPOCH in _saved_epochs(log.read_text()):
            victim = int((job_dir / "harness" / f"pid-{victim_rank}-0").read_text())
            try:
                os.kill(victim, signal.SIGKILL)
            except ProcessLookupError:
                pass  # it had already finished: test_the_kill_landed_in_the_middle_of_training says so
            break
        time.sleep(0.02)
    interrupted = finish(popen, argv, cwd, limit, started)
    interrupted.world_size = nproc * nnodes
    assert victim is not None, f"training never reached epoch {KILL_AFTER_EPOCH}\n{interrupted.report()}"
    interrupted.check(interrupted.world_size)

    reference = run_job(argv, _scratch(ELASTIC, tmp_path_factory, "uninterrupted").parent, limit, env)
    reference.world_size = nproc * nnodes
    reference.check(reference.world_size)
    return {"interrupted": interrupted, "reference": reference, "victim": victim, "victim_rank": victim_rank}


@pytest.mark.verifies("torchrun_launching/elastic_train.py")
class TestElasticRestart:
    def test_the_kill_landed_in_the_middle_of_training(self, elastic_runs):
        saved = _saved_epochs(elastic_runs["interrupted"].stdout(0, attempt=0))
        assert saved and saved[-1] >= KILL_AFTER_EPOCH
        assert saved[-1] < elastic.EPOCHS - 1, "the first attempt finished before the kill: nothing was interrupted"

    def test_torchrun_restarted_every_worker_once(self, elastic_runs):
        job = elastic_runs["interrupted"]
        n = job.world_size
        attempts = sorted({(r.attempt, r.local_rank) for r in job.ranks})
        assert attempts == [(a, lr) for a in (0, 1) for lr in range(n)]  # attempt_0/ and attempt_1/ logs
        pid_dir = job.job_dir / "harness"
        first = {r: int((pid_dir / f"pid-{r}-0").read_text()) for r in range(n)}
        second = {r: int((pid_dir / f"pid-{r}-1").read_text()) for r in range(n)}
        assert first[elastic_runs["victim_rank"]] == elastic_runs["victim"]
        assert set(first.values()).isdisjoint(second.values())  # new processes, all of them
        assert pids_alive(list(first.values()) + list(second.values())) == []
        for rank in range(n):
            assert job.records[rank]["restart"] == 1  # TORCHELASTIC_RESTART_COUNT in the new workers
        start = _START_LINE.search(job.stdout(0, attempt=1))
        assert start and start["restart"] == "1"

    def test_training_resumed_from_the_last_checkpoint(self, elastic_runs):
        job = elastic_runs["interrupted"]
        before = _saved_epochs(job.stdout(0, attempt=0))
        after = _saved_epochs(job.stdout(0, attempt=1))
        last = before[-1]
        assert before == list(range(last + 1))
        start = _START_LINE.search(job.stdout(0, attempt=1))
        assert int(start["epoch"]) == last + 1
        # no epoch lost, none repeated past the checkpoint: on every rank, the restarted
        # workers iterated exactly the epochs after it, once each
        assert after == list(range(last + 1, elastic.EPOCHS))
        for rank in range(job.world_size):
            epochs = [epoch for epoch, _ in job.records[rank]["sampler_epochs"]]
            assert epochs == list(range(last + 1, elastic.EPOCHS)), f"rank {rank}"

    def test_the_resumed_run_follows_the_uninterrupted_one(self, elastic_runs):
        job, reference = elastic_runs["interrupted"], elastic_runs["reference"]
        losses = lambda stdout: [(m["epoch"], m["loss"]) for m in _EPOCH_LINE.finditer(stdout)]
        resumed = losses(job.stdout(0, attempt=0)) + losses(job.stdout(0, attempt=1))
        assert resumed == losses(reference.stdout(0))
        assert len(resumed) == elastic.EPOCHS

    def test_final_parameters_equal_an_uninterrupted_run(self, elastic_runs):
        job, reference = elastic_runs["interrupted"], elastic_runs["reference"]
        expected = reference.records[0]["final_state"]
        for rank in range(job.world_size):
            state = job.records[rank]["final_state"]
            assert state.keys() == expected.keys()
            for name in expected:
                assert torch.equal(state[name], expected[name]), f"rank {rank}: {name}"
        checkpoint = torch.load(job.workdir / elastic.CHECKPOINT, weights_only=True)
        assert checkpoint["epoch"] == elastic.EPOCHS - 1
        for name in expected:
            assert torch.equal(checkpoint["model"][name], expected[name]), name
