"""snippets/torchrun_launching/fixed_port.py, run exactly as docs/torchrun-launching.md says.

The page's line (one node, ``--master-port=29500``) alone passes; started twice at the same
time on this machine, one job gets the port and the other fails at once with "address
already in use". 29500 is used by no other program of the course, so jobs of other test
modules running in parallel never take it.
"""
from __future__ import annotations

import pytest

from conftest import SNIPPETS, bare_run_test, run_snippet
from coursekit.runspec import read_spec
from slurm_plugin import require_this_machine

from .lesson import jobs_at_once, store_lines

PROGRAM = SNIPPETS / "torchrun_launching" / "fixed_port.py"
SPEC = read_spec(PROGRAM)

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("torchrun_launching/fixed_port.py")]


@pytest.fixture(scope="module")
def job(tmp_path_factory, pytestconfig):
    return run_snippet(PROGRAM, tmp_path_factory, pytestconfig)


@pytest.fixture(scope="module")
def clash(tmp_path_factory, pytestconfig, job):
    require_this_machine(pytestconfig, "two jobs on one host, for their ports to clash")
    return jobs_at_once(PROGRAM, tmp_path_factory, pytestconfig)


def test_alone_the_job_uses_the_port_it_was_given(job):
    ports = {line["port"] for line in store_lines(job)}
    assert ports == {"29500"}
    assert {line["id"] for line in store_lines(job)} == {"none"}  # the static rendezvous


def test_two_jobs_with_the_same_port_one_fails_at_once(clash):
    passed = [job for job in clash if job.returncode == 0]
    failed = [job for job in clash if job.returncode not in (0, None)]
    assert len(passed) == 1 and len(failed) == 1, "\n\n".join(job.report() for job in clash)
    assert not any(job.timed_out for job in clash)
    (loser,) = failed
    assert "EADDRINUSE" in loser.agent_output and "address already in use" in loser.agent_output
    assert loser.ranks == [] or all(not log.stdout for log in loser.ranks)  # no worker of it ran
    assert {line["port"] for line in store_lines(passed[0])} == {"29500"}


test_bare_run = bare_run_test(PROGRAM, reference="job", stdout=(r"^rank 1: store at \S+:29500, rendezvous id none$",))
