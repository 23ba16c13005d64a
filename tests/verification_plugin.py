"""pytest plugin: run snippet tests only when needed, and record what passed.

A test module marks the program it verifies with ``pytest.mark.verifies("lesson/x.py")``.

* Before the run, a program whose current content already has a passing record for
  this machine's environment class is skipped as already verified, unless
  ``--reverify`` (or ``COURSE_REVERIFY=1``) is given; under CI (``CI=true``) every
  program runs. A program that needs more CUDA GPUs than the machine has is skipped
  with ``Requires: [CUDA GPUs>=N + nccl]``.
* Every program's module has a bare-run test (``conftest.bare_run_test``), run
  ``--bare-runs`` times (``COURSE_BARE_RUNS``, default 3): the page's launch line as a
  reader runs it, without the harness.
* After the run (in the xdist controller, or the only process), every program whose
  tests all passed, bare runs included, gets its record in ``snippets/verification.json``
  for this environment class, with the number of bare runs and the verified output;
  other classes' records are kept. One failed bare run means no record.
"""
from __future__ import annotations

import functools
import os
import platform
from pathlib import Path

import pytest

from coursekit.runspec import LaunchLine, RunSpec, read_spec, torchrun_shape
from coursekit.verification import Record, content_hash, environment_class, load_records, save_records, status

ROOT = Path(__file__).resolve().parent.parent
SNIPPETS = ROOT / "snippets"
DEFAULT_BARE_RUNS = 3


def pytest_addoption(parser):
    group = parser.getgroup("course", "snippet verification")
    group.addoption("--reverify", action="store_true", default=False,
                    help="run snippet programs even when a passing record matches their content (also COURSE_REVERIFY=1; always on under CI)")
    group.addoption("--nproc-per-node", type=int, default=None, metavar="N",
                    help="launch every snippet program with N processes per node instead of its page's number")
    group.addoption("--gpu-only", action="store_true", default=False,
                    help="run only the programs that need CUDA GPUs")
    group.addoption("--no-record", action="store_true", default=False,
                    help="leave snippets/verification.json as it is (the bench's repeated runs)")
    group.addoption("--bare-runs", type=int, default=None, metavar="K",
                    help=f"run each program's launch line bare (no harness) K times (also COURSE_BARE_RUNS; default {DEFAULT_BARE_RUNS})")


def pytest_configure(config):
    config.addinivalue_line("markers", "verifies(program): the snippet program (relative to snippets/) this test module verifies")


def bare_runs(config: pytest.Config) -> int:
    """How many bare runs each program gets: ``--bare-runs``, else ``COURSE_BARE_RUNS``, else 3.

    Raises:
        pytest.UsageError: the number is not a positive integer.
    """
    value = config.getoption("--bare-runs")
    if value is None:
        raw = os.environ.get("COURSE_BARE_RUNS", "") or str(DEFAULT_BARE_RUNS)
        try:
            value = int(raw)
        except ValueError:
            raise pytest.UsageError(f"COURSE_BARE_RUNS={raw!r} is not a number; set it to how many bare runs each program gets, e.g. 3") from None
    if value < 1:
        raise pytest.UsageError(f"--bare-runs {value}: each program needs at least one bare run")
    return value


def pytest_generate_tests(metafunc):
    """A test that asks for ``bare_run_index`` runs once per bare run: ``[bare-1]``…"""
    if "bare_run_index" in metafunc.fixturenames:
        k = bare_runs(metafunc.config)
        metafunc.parametrize("bare_run_index", range(1, k + 1), ids=[f"bare-{i}" for i in range(1, k + 1)])


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


def effective_line(spec: RunSpec, config: pytest.Config, node: int = 0) -> LaunchLine:
    """The page's launch line, with ``--nproc-per-node`` replaced when the option asks."""
    line = spec.lines[node]
    override = config.getoption("--nproc-per-node")
    return line if override is None else line.with_nproc_per_node(override)


def effective_command(spec: RunSpec, config: pytest.Config, node: int = 0) -> tuple[str, ...]:
    """The command words of :func:`effective_line` (for ``torchrun_shape``)."""
    return effective_line(spec, config, node).argv


def hardware_env(nproc_per_node: int, nnodes: int = 1) -> list[dict[str, str]]:
    """The device selection of each node of a job run on this machine.

    With a GPU for every process of every node, each node sees its own block of GPUs;
    with GPUs but too few, every node sees none (the job runs on CPU and gloo); with no
    GPU, nothing is set.
    """
    _, count, _ = _torch_env()
    if count == 0:
        return [{} for _ in range(nnodes)]
    if environment(nproc_per_node * nnodes)["device"] == "cpu":
        return [{"CUDA_VISIBLE_DEVICES": ""} for _ in range(nnodes)]
    if nnodes == 1:
        return [{}]
    return [{"CUDA_VISIBLE_DEVICES": ",".join(str(node * nproc_per_node + i) for i in range(nproc_per_node))}
            for node in range(nnodes)]


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
        if "bare_run_index" in getattr(item, "fixturenames", ()):
            item.user_properties.append(("bare", True))
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
                reason=f"already verified: {program} sha256 {current.sha256[:12]} on {env_class}, "
                       f"{current.bare_runs} bare runs (--reverify runs it again)"))
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = kept


_OUTCOMES: dict[str, dict] = {}  # program -> passed/failed counts, bare runs passed, output, test module


def pytest_runtest_logreport(report):
    """Count outcomes per program; user_properties travel from xdist workers to the controller."""
    props = dict(report.user_properties)
    program = props.get("verifies")
    if program is None:
        return
    outcome = _OUTCOMES.setdefault(program, {"passed": 0, "failed": 0, "bare": 0, "output": None,
                                             "module": report.nodeid.split("::")[0]})
    if report.failed:
        outcome["failed"] += 1
    elif report.passed and report.when == "call":
        outcome["passed"] += 1
        if props.get("bare"):
            outcome["bare"] += 1
        if props.get("output") is not None:
            outcome["output"] = props["output"]


def pytest_sessionfinish(session, exitstatus):
    if hasattr(session.config, "workerinput"):
        return  # xdist worker: the controller sees every report and writes once
    if not _OUTCOMES or session.config.getoption("--no-record"):
        return
    records = {program: dict(envs) for program, envs in load_records(SNIPPETS).items()}  # a copy to change
    for program, outcome in sorted(_OUTCOMES.items()):
        if outcome["failed"] or not outcome["passed"] or not outcome["bare"]:
            continue  # a failure, or never run bare: not verified
        spec = read_spec(SNIPPETS / program)
        nproc, nnodes = _shape(spec, session.config)
        env = environment(nproc * nnodes)
        digest, files = content_hash(SNIPPETS / program, SNIPPETS)
        record = Record(sha256=digest, files=files, nproc_per_node=nproc, nnodes=nnodes, test=outcome["module"],
                        bare_runs=outcome["bare"], output=outcome["output"] or {}, **env)
        records.setdefault(program, {})[record.environment] = record
    save_records(SNIPPETS, records)  # writes only if something changed
