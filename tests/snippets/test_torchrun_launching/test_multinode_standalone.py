"""snippets/torchrun_launching/multinode_standalone.py, run exactly as docs/torchrun-launching.md says.

The "break it" exercise: multinode_train.py's multi-node line with --standalone added, typed
in two "terminals" of this machine. Both agents must still be waiting when the runner
stops them (seen in their rendezvous, as the ``blocked-in:`` line says, or at the time
limit), each listening on a port of its own (its private rendezvous) and neither on the
line's endpoint port, and no worker may have started.
"""
from __future__ import annotations

import re
import time

import pytest

from conftest import SNIPPETS, bare_run_test, copy_snippet
from coursekit.runspec import read_spec, torchrun_shape
from torchjob import Hang, finish_all, launch
from slurm_plugin import require_this_machine
from verification_plugin import effective_line, hardware_env

from .lesson import agent_processes, listening_ports, wait_for

PROGRAM = SNIPPETS / "torchrun_launching" / "multinode_standalone.py"
SPEC = read_spec(PROGRAM)
ENDPOINT_PORT = int(re.search(r"HEAD_PORT:-(\d+)", SPEC.lines[0].text).group(1))

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("torchrun_launching/multinode_standalone.py")]


@pytest.fixture(scope="module")
def nodes(tmp_path_factory, pytestconfig):
    """The page's line on two 'nodes' of this machine, with the ports each agent listened on."""
    require_this_machine(pytestconfig, "the listening ports of each torchrun agent's process")
    line = effective_line(SPEC, pytestconfig)
    nproc, nnodes = torchrun_shape(line.argv)
    assert nnodes == 2
    cwds = [copy_snippet(PROGRAM, tmp_path_factory.mktemp(f"node{i}")).parent for i in range(nnodes)]
    started = time.monotonic()
    jobs = [launch(line, cwd, hardware=hw) for cwd, hw in zip(cwds, hardware_env(nproc, nnodes))]
    ports: list[set[int]] = [set() for _ in jobs]

    def every_agent_listens() -> bool:
        for i, job in enumerate(jobs):
            for agent in agent_processes(job):
                ports[i] |= listening_ports(agent)
        return all(ports)

    wait_for(every_agent_listens, SPEC.time_limit_s - 10, poll_s=0.5)
    results = finish_all(jobs, SPEC.time_limit_s, started, hang=Hang.of(SPEC, nproc * nnodes))
    return {"results": results, "ports": ports}


def test_both_agents_wait_until_stopped(nodes):
    for result in nodes["results"]:
        assert result.timed_out, result.report()
        assert not result.leftovers, result.report()


def test_no_worker_ever_started(nodes):
    for result in nodes["results"]:
        assert not list((result.job_dir / "harness").glob("pid-*")), result.report()
        assert result.ranks == []
        assert result.stdout_text.strip() == ""  # nothing is printed


def test_each_agent_runs_its_own_rendezvous_not_the_endpoints(nodes):
    first, second = nodes["ports"]
    assert first and second, nodes["ports"]
    assert first.isdisjoint(second)  # two private rendezvous stores: the agents never meet
    assert ENDPOINT_PORT not in first | second  # --standalone ignored the endpoint


test_bare_run = bare_run_test(PROGRAM, reference=None)  # it prints nothing: no worker runs
