"""pytest plugin: run snippet tests only when needed, and record what passed.

A test module marks the program it verifies with ``pytest.mark.verifies("lesson/x.py")``.

* Before the run, a program whose current content already has a passing record for
  this machine's environment class is skipped as already verified, unless
  ``--reverify`` (or ``COURSE_REVERIFY=1``) is given; under CI (``CI=true``) every
  program runs. A program that needs more CUDA GPUs than the machine has is skipped
  with ``Requires: [CUDA GPUs>=N + nccl]``.
* After the run (in the xdist controller, or the only process), every program whose
  tests all passed gets its record in ``snippets/verification.json`` for this
  environment class; other classes' records are kept.
"""
from __future__ import annotations

import functools
import os
import platform
from pathlib import Path

import pytest

from coursekit.runspec import RunSpec, read_spec, torchrun_shape
from coursekit.verification import Record, content_hash, environment_class, load_records, save_records, status

ROOT = Path(__file__).resolve().parent.parent
SNIPPETS = ROOT / "snippets"


def pytest_addoption(parser):
    group = parser.getgroup("course", "snippet verification")
    group.addoption("--reverify", action="store_true", default=False,
                    help="run snippet programs even when a passing record matches their content (also COURSE_REVERIFY=1; always on under CI)")
    group.addoption("--nproc-per-node", type=int, default=None, metavar="N",
                    help="launch every snippet program with N processes per node instead of its page's number")
    group.addoption("--gpu-only", action="store_true", default=False,
                    help="run only the programs that need CUDA GPUs")


def pytest_configure(config):
    config.addinivalue_line("markers", "verifies(program): the snippet program (relative to snippets/) this test module verifies")


@functools.lru_cache(maxsize=None)
def _torch_env() -> tuple[str, int, bool]:
    """(torch version without local tag, CUDA device count, NCCL available)."""
    import torch
    import torch.distributed as dist

    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    return torch.__version__.split("+")[0], count, bool(count) and dist.is_nccl_available()


def environment(processes: int) -> dict:
    """The environment class a job of ``processes`` processes (on this machine) runs in.

    CUDA and NCCL when there is one GPU per process, else CPU and gloo (the runner then
    hides the GPUs, so a program's own device check agrees).
    """
    version, count, nccl = _torch_env()
    cuda = nccl and count >= processes
    return {
        "torch": version,
        "python": ".".join(platform.python_version_tuple()[:2]),
        "backend": "nccl" if cuda else "gloo",
        "device": "cuda" if cuda else "cpu",
        "device_count": processes if cuda else 0,
    }


def effective_command(spec: RunSpec, config: pytest.Config, node: int = 0) -> list[str]:
    """The page's launch command, with ``--nproc-per-node`` replaced when the option asks."""
    argv = list(spec.commands[node])
    override = config.getoption("--nproc-per-node")
    if override is None:
        return argv
    out = []
    for arg in argv:
        if arg.startswith("--nproc-per-node=") or arg.startswith("--nproc_per_node="):
            arg = f"--nproc-per-node={override}"
        out.append(arg)
    return out


def job_env(nproc_per_node: int) -> dict[str, str]:
    """Environment additions for a job: hide GPUs when there are too few for one per process."""
    _, count, _ = _torch_env()
    if count and environment(nproc_per_node)["device"] == "cpu":
        return {"CUDA_VISIBLE_DEVICES": ""}
    return {}


def _reverify(config) -> bool:
    return (
        config.getoption("--reverify")
        or os.environ.get("COURSE_REVERIFY", "") not in ("", "0")
        or os.environ.get("CI", "").lower() in ("1", "true", "yes")
    )


def _program_of(item) -> str | None:
    marker = item.get_closest_marker("verifies")
    return marker.args[0] if marker else None


def _shape(spec: RunSpec, config) -> tuple[int, int]:
    return torchrun_shape(effective_command(spec, config))


def pytest_collection_modifyitems(config, items):
    if not any(_program_of(i) for i in items):
        return
    records = load_records(SNIPPETS)
    deselected, kept = [], []
    for item in items:
        program = _program_of(item)
        if program is None:
            (deselected if config.getoption("--gpu-only") else kept).append(item)
            continue
        spec = read_spec(SNIPPETS / program)
        if config.getoption("--gpu-only") and spec.cuda_gpus == 0:
            deselected.append(item)
            continue
        kept.append(item)
        nproc, nnodes = _shape(spec, config)
        item.user_properties.append(("verifies", program))
        env = environment(nproc * nnodes)  # the test runs every node of the job on this machine
        _, count, nccl = _torch_env()
        if spec.cuda_gpus and (count < spec.cuda_gpus or not nccl):
            item.add_marker(pytest.mark.skip(reason=f"Requires: [CUDA GPUs>={spec.cuda_gpus} + nccl] (this machine has {count})"))
            continue
        if _reverify(config):
            continue
        env_class = environment_class(env["device"], env["backend"])
        current = status(program, SNIPPETS, records).current.get(env_class)
        if current is not None and current.nproc_per_node == nproc:
            item.add_marker(pytest.mark.skip(
                reason=f"already verified: {program} sha256 {current.sha256[:12]} on {env_class} (--reverify runs it again)"))
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = kept


_OUTCOMES: dict[str, dict] = {}  # program -> passed/failed counts and its test module


def pytest_runtest_logreport(report):
    """Count outcomes per program; user_properties travel from xdist workers to the controller."""
    program = dict(report.user_properties).get("verifies")
    if program is None:
        return
    outcome = _OUTCOMES.setdefault(program, {"passed": 0, "failed": 0, "module": report.nodeid.split("::")[0]})
    if report.failed:
        outcome["failed"] += 1
    elif report.passed and report.when == "call":
        outcome["passed"] += 1


def pytest_sessionfinish(session, exitstatus):
    if hasattr(session.config, "workerinput"):
        return  # xdist worker: the controller sees every report and writes once
    if not _OUTCOMES:
        return
    records = {program: dict(envs) for program, envs in load_records(SNIPPETS).items()}  # a copy to change
    for program, outcome in sorted(_OUTCOMES.items()):
        if outcome["failed"] or not outcome["passed"]:
            continue
        spec = read_spec(SNIPPETS / program)
        nproc, nnodes = _shape(spec, session.config)
        env = environment(nproc * nnodes)
        digest, files = content_hash(SNIPPETS / program, SNIPPETS)
        record = Record(sha256=digest, files=files, nproc_per_node=nproc, nnodes=nnodes, test=outcome["module"], **env)
        records.setdefault(program, {})[record.environment] = record
    save_records(SNIPPETS, records)  # writes only if something changed
