"""Helpers shared by the tests of docs/torchrun-launching.md's programs."""
from __future__ import annotations

import re
import time
from pathlib import Path

import psutil

from conftest import copy_snippet
from coursekit.runspec import read_spec, torchrun_shape
from torchjob import JobResult, Launched, finish, job_processes, launch
from verification_plugin import effective_line, hardware_env

_STORE = re.compile(r"^rank (?P<rank>\d+): store at (?P<addr>[^:\s]+):(?P<port>\d+), rendezvous id (?P<id>\S+)$", re.M)


def jobs_at_once(program: Path, tmp_path_factory, config, copies: int = 2) -> list[JobResult]:
    """The page's line of ``program`` started ``copies`` times at the same moment, each in
    its own fresh folder (as in that many terminals of one machine), with the harness.

    Returns:
        One :class:`JobResult` per copy, ``world_size`` set; nothing is asserted.
    """
    spec = read_spec(program)
    line = effective_line(spec, config)
    nproc, nnodes = torchrun_shape(line.argv)
    cwds = [copy_snippet(program, tmp_path_factory.mktemp(f"{program.stem}_{i}")).parent for i in range(copies)]
    started = time.monotonic()
    jobs = [launch(line, cwd, hardware=hardware_env(nproc)[0]) for cwd in cwds]
    results = [finish(job, spec.time_limit_s, started) for job in jobs]
    for result in results:
        result.world_size = nproc * nnodes
    return results


def store_lines(result: JobResult) -> list[dict]:
    """What each worker of a default_port.py / fixed_port.py job printed about its store."""
    return [m.groupdict() for log in result.ranks for m in _STORE.finditer(log.stdout)]


def wait_for(predicate, timeout_s: float, poll_s: float = 0.1) -> bool:
    """Poll ``predicate()`` until it is true or ``timeout_s`` seconds have passed."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(poll_s)
    return bool(predicate())


def agent_processes(job: Launched) -> list[psutil.Process]:
    """The torchrun agent of a launched line: bash itself when it exec'd torchrun (a
    one-command line), else the torchrun process under it; its workers are left out."""
    agents = []
    for proc in job_processes(job):
        try:
            if any(word.endswith("torchrun") for word in proc.cmdline()[:2]):
                agents.append(proc)
        except psutil.Error:
            continue
    return agents


def listening_ports(proc: psutil.Process) -> set[int]:
    """The TCP ports a process listens on."""
    try:
        return {c.laddr.port for c in proc.net_connections(kind="tcp") if c.status == psutil.CONN_LISTEN}
    except psutil.Error:
        return set()
