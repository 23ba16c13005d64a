"""snippets/torchrun_launching/default_port.py, run exactly as docs/torchrun-launching.md says.

The page's line (one node, neither --standalone nor a port) twice at the same time on
this machine: both jobs run, each on a free port of its own, not on the static
rendezvous's default 29500 (torch 2.13's ``torch.distributed.run.run`` switches such a
launch to c10d on ``localhost:0``).
"""
from __future__ import annotations

import pytest

from conftest import SNIPPETS, bare_run_test
from coursekit.runspec import read_spec

from .lesson import jobs_at_once, store_lines

PROGRAM = SNIPPETS / "torchrun_launching" / "default_port.py"
SPEC = read_spec(PROGRAM)

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("torchrun_launching/default_port.py")]


@pytest.fixture(scope="module")
def jobs(tmp_path_factory, pytestconfig):
    results = jobs_at_once(PROGRAM, tmp_path_factory, pytestconfig)
    for result in results:
        result.check(result.world_size)
    return results


@pytest.fixture(scope="module")
def job(jobs):
    """The first of the two jobs: the verified run whose output the page shows."""
    return jobs[0]


def test_the_line_sets_no_port_and_no_standalone():
    (line,) = SPEC.lines
    assert not any(word.startswith(("--standalone", "--master-port", "--master_port", "--rdzv")) for word in line.argv)


def test_two_jobs_side_by_side_both_run(jobs):
    for job in jobs:
        lines = store_lines(job)
        assert sorted(int(line["rank"]) for line in lines) == list(range(job.world_size))


def test_each_job_gets_a_free_port_of_its_own_not_29500(jobs):
    ports = [{line["port"] for line in store_lines(job)} for job in jobs]
    assert all(len(p) == 1 for p in ports)  # one store per job
    assert ports[0].isdisjoint(ports[1])
    assert "29500" not in ports[0] | ports[1]
    assert {line["addr"] for job in jobs for line in store_lines(job)} == {"localhost"}  # c10d on localhost:0


def test_each_job_gets_a_random_rendezvous_id(jobs):
    ids = [{line["id"] for line in store_lines(job)} for job in jobs]
    assert all(len(i) == 1 for i in ids)
    assert ids[0].isdisjoint(ids[1])
    assert "none" not in ids[0] | ids[1]  # the static rendezvous's id would be "none"


test_bare_run = bare_run_test(PROGRAM, reference="job", stdout=(r"^rank 1: store at \S+:\d+, rendezvous id \S+$",))
