"""snippets/torchrun_launching/env_report.py, run exactly as docs/torchrun-launching.md says.

The page's command twice at the same time on this machine: what torchrun gave each
worker, read from what the worker printed and from the harness records, and that two
``--standalone`` jobs side by side get their own port and run id.
"""
from __future__ import annotations

import argparse
import os
import re
import time

import pytest
import torch

from conftest import SNIPPETS, bare_run_test, copy_snippet, import_program
from coursekit.runspec import read_spec, torchrun_shape
from torchjob import JobResult, finish, launch, pids_alive, worker_pids
from verification_plugin import effective_line, hardware_env

PROGRAM = SNIPPETS / "torchrun_launching" / "env_report.py"
SPEC = read_spec(PROGRAM)
env_report = import_program(PROGRAM)
# the variables the page says torchrun sets for every worker
PAGE_VARIABLES = {"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "MASTER_ADDR", "MASTER_PORT",
                  "TORCHELASTIC_RESTART_COUNT", "TORCHELASTIC_MAX_RESTARTS", "TORCHELASTIC_RUN_ID", "OMP_NUM_THREADS"}
_GIVEN = re.compile(r"^pid (?P<pid>\d+): (?P<pairs>.*)$", re.M)
_GROUP = re.compile(r"^process group: rank (?P<rank>\d+) of (?P<size>\d+), backend (?P<backend>\w+)$", re.M)

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("torchrun_launching/env_report.py")]


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
    line = effective_line(SPEC, pytestconfig)
    nproc, nnodes = torchrun_shape(line.argv)
    cwds = [copy_snippet(PROGRAM, tmp_path_factory.mktemp(f"env_report_{i}")).parent for i in range(2)]
    started = time.monotonic()
    jobs = [launch(line, cwd, hardware=hardware_env(nproc)[0]) for cwd in cwds]
    results = [finish(job, SPEC.time_limit_s, started) for job in jobs]
    for result in results:
        result.world_size = nproc * nnodes
        result.check(result.world_size)
    return results


@pytest.fixture(scope="module")
def env_job(env_jobs) -> JobResult:
    """The first of the two jobs: the verified run whose output the page shows."""
    return env_jobs[0]


def test_one_worker_process_per_slot(env_jobs):
    for job in env_jobs:
        assert job.world_size >= 2
        reports = _reports(job)
        assert len(reports) == job.world_size
        pids = sorted(r["pid"] for r in reports)
        assert len(set(pids)) == job.world_size  # separate processes
        assert pids == sorted(worker_pids(job))
        assert pids_alive(pids) == []  # and torchrun waited for all of them


def test_every_worker_gets_the_variables_the_page_lists(env_jobs):
    for job in env_jobs:
        for report in _reports(job):
            assert set(report["env"]) == set(env_report.TORCHRUN_VARIABLES)
            assert PAGE_VARIABLES <= set(report["env"])
            assert all(report["env"][name] for name in PAGE_VARIABLES)


def test_ranks_local_ranks_and_world_size(env_jobs):
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


def test_all_workers_of_a_job_share_one_store_address_and_run_id(env_jobs):
    for job in env_jobs:
        envs = [r["env"] for r in _reports(job)]
        for name in ("MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RUN_ID"):
            assert len({env[name] for env in envs}) == 1, name
        assert all(env["TORCHELASTIC_RESTART_COUNT"] == "0" for env in envs)
        assert all(env["TORCHELASTIC_MAX_RESTARTS"] == "0" for env in envs)  # the default


def test_standalone_jobs_side_by_side_get_their_own_port(env_jobs):
    first, second = ({r["env"]["MASTER_PORT"] for r in _reports(job)} for job in env_jobs)
    assert first.isdisjoint(second)
    ids = [{r["env"]["TORCHELASTIC_RUN_ID"] for r in _reports(job)} for job in env_jobs]
    assert ids[0].isdisjoint(ids[1])


def test_several_workers_on_a_node_get_one_omp_thread_each(env_jobs):
    for job in env_jobs:
        assert job.world_size > 1
        assert all(r["env"]["OMP_NUM_THREADS"] == "1" for r in _reports(job))
        assert "Setting OMP_NUM_THREADS environment variable for each process to be 1" in job.agent_output


# What the page says about torchrun's own options, checked against torch's parser and
# helpers (torch/distributed/run.py, torch/distributed/argparse_util.py).

def _options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    """Each optional argument by its longest option string (the one torchrun names its
    PET_ variable after), --help left out."""
    return {max(a.option_strings, key=len): a for a in parser._actions
            if a.option_strings and not isinstance(a, argparse._HelpAction)}


def test_most_options_can_come_from_a_pet_variable_but_not_all():
    from torch.distributed.argparse_util import check_env, env
    from torch.distributed.run import get_args_parser

    options = _options(get_args_parser())
    without = {name for name, action in options.items() if not isinstance(action, (env, check_env))}
    assert without == {"--logs-specs", "--numa-binding"}  # the page's list, and no other
    assert len(options) - len(without) > 25  # "most"
    for name in ("--duplicate-stdout-filters", "--duplicate-stderr-filters", "--nproc-per-node", "--standalone"):
        assert name not in without, name


def test_a_pet_variable_is_the_option_in_capitals_and_the_command_line_wins(monkeypatch):
    from torch.distributed.run import get_args_parser

    monkeypatch.setenv("PET_NPROC_PER_NODE", "3")
    monkeypatch.setenv("PET_STANDALONE", "1")
    parser = get_args_parser()  # the variables are read when the parser is built
    assert parser.parse_args(["train.py"]).nproc_per_node == "3"
    assert parser.parse_args(["train.py"]).standalone is True
    assert parser.parse_args(["--nproc-per-node=2", "train.py"]).nproc_per_node == "2"
    monkeypatch.setenv("PET_LOGS_SPECS", "whatever")
    assert get_args_parser().parse_args(["train.py"]).logs_specs is None  # no variable for this one


def test_nproc_per_node_accepts_a_number_cpu_gpu_and_auto():
    from torch.distributed.run import determine_local_world_size

    assert determine_local_world_size("3") == 3
    cpus = len(os.sched_getaffinity(0))  # the logical CPUs this process may use
    assert determine_local_world_size("cpu") == cpus
    if torch.cuda.is_available():
        assert determine_local_world_size("gpu") == torch.cuda.device_count()
        assert determine_local_world_size("auto") == torch.accelerator.device_count()
    else:
        with pytest.raises(ValueError, match="Cuda is not available"):
            determine_local_world_size("gpu")
        assert determine_local_world_size("auto") == cpus


def test_workers_run_unbuffered_and_print_writes_the_newline_separately():
    # Why the programs write each line in one call: torchrun starts every worker with
    # `python -u` (torch/distributed/run.py), and under -u print() hands the text and the
    # newline to the OS in two writes, between which another worker's line can land.
    import io

    from torch.distributed.run import config_from_args, parse_args

    _, cmd, cmd_args = config_from_args(parse_args(["--standalone", "--nproc-per-node=2", "train.py"]))
    assert cmd_args[:2] == ["-u", "train.py"]

    class Writes(io.RawIOBase):
        def __init__(self):
            self.calls = []

        def writable(self):
            return True

        def write(self, b):
            self.calls.append(bytes(b))
            return len(b)

    raw = Writes()
    unbuffered = io.TextIOWrapper(raw, write_through=True)  # what -u makes of sys.stdout
    print("rank 0 of 2", file=unbuffered)
    assert raw.calls == [b"rank 0 of 2", b"\n"]
    raw.calls.clear()
    unbuffered.write("rank 0 of 2\n")
    assert raw.calls == [b"rank 0 of 2\n"]


test_bare_run = bare_run_test(PROGRAM, reference="env_job",
                              stdout=(r"^pid \d+: RANK=0 LOCAL_RANK=0 WORLD_SIZE=\d+ ", r"^process group: rank 0 of \d+, backend (gloo|nccl)$"))
