"""pytest plugin: run snippet tests only when needed, and record what passed.

A test module marks the program it verifies with ``pytest.mark.verifies("lesson/x.py")``,
and only that module: ``tests/snippets/test_lesson/test_x.py``, the one the build names
(``coursekit.verification.test_for``). A module of a lesson named after an existing program
without the marker, a marker naming another module's program or none, and a torchrun module
of a lesson that verifies nothing fail to collect, in one line (:func:`verifies_problem`).

* Before the run, a program whose current content already has a passing record for
  this platform and environment class is skipped as already verified, unless
  ``--reverify`` (or ``COURSE_REVERIFY=1``) is given; under CI (``CI=true``) every
  program runs. A program that needs more CUDA GPUs than the machine has is skipped
  with ``Requires: [CUDA GPUs>=N + nccl]``.
* Every program's module has a bare-run test (``conftest.bare_run_test``), run
  ``--bare-runs`` times (``COURSE_BARE_RUNS``, default 3): the page's launch line as a
  reader runs it, without the harness.
* After the run (in the xdist controller, or the only process), every program whose
  tests all passed, bare runs included, gets its record for this environment class in
  this platform's file, ``snippets/verification/<platform>.json``
  (:func:`machine_platform`), with the number of bare runs and the verified output;
  other classes' records and other platforms' files are kept. One failed bare run means no record. The backend,
  device and GPU count in a record are what the verified run's ranks reported
  (``conftest.ran_on``), not what was expected; ``launcher`` says whether Slurm ran it
  (``tests/slurm_plugin.py``), and ``checks`` whether the lesson's claims were tested
  (``"claims"``) or only the bare runs (``"bare"``, e.g. ``-k bare_run``).
* A program that needs CUDA (``requires: cuda>=N``) always sees the GPUs; where there
  are fewer GPUs than processes it shares them (and chooses gloo itself). ``--cuda-only``
  keeps only the programs whose job runs on CUDA here: with ``--nproc-per-node 1`` on a
  one-GPU machine, every program's CUDA path with one process (``tests/gpu-check.sh``).
"""
from __future__ import annotations

import functools
import os
import platform
from pathlib import Path

import pytest

import torchjob
from coursekit.runspec import LaunchLine, RunSpec, launch_shape, read_spec
from coursekit.verification import (Record, content_hash, environment_class, load_records, platform_name, record_key,
                                    save_records, status, test_for)

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
    group.addoption("--cuda-only", action="store_true", default=False,
                    help="run only the programs whose job runs on CUDA on this machine (or Slurm partition)")
    group.addoption("--no-record", action="store_true", default=False,
                    help="leave snippets/verification/ as it is (the bench's repeated runs)")
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


@functools.lru_cache(maxsize=None)
def machine_platform() -> str:
    """This machine's platform, the name of the records file its sessions write
    (:func:`coursekit.verification.platform_name`): torch's version, the processor and
    every GPU torch sees (``CUDA_VISIBLE_DEVICES`` as the session was started)."""
    import torch

    names = [torch.cuda.get_device_name(i) for i in range(_torch_env()[1])]
    return platform_name(torch.__version__, platform.machine(), names)


def on_slurm(batch: bool = False) -> bool:
    """The job runs under Slurm: the program submits a batch script (``batch``), or the
    session wraps every launch (``--slurm-partition``/``--slurm-local``)."""
    return batch or (torchjob.SLURM is not None and torchjob.SLURM.wraps)


def gpus_available(nnodes: int = 1, batch: bool = False) -> tuple[int, bool]:
    """(CUDA GPUs a job of ``nnodes`` nodes can get, NCCL available): this machine's, or
    under Slurm the partition's GPUs per node times the nodes (none on the local test
    cluster before it starts: it declares no GPUs)."""
    _, count, nccl = _torch_env()
    if on_slurm(batch):
        per_node = torchjob.SLURM.gpus_per_node if torchjob.SLURM is not None else 0
        return per_node * nnodes, per_node > 0
    return count, nccl


def environment(processes: int, nnodes: int = 1, needs_cuda: bool = False, batch: bool = False) -> dict:
    """The environment class a job of ``processes`` processes on ``nnodes`` nodes is
    expected to run in (here, or under Slurm; see :func:`gpus_available`).

    CUDA and NCCL when there is one GPU per process, else CPU and gloo (what every
    program's own ``choose_device`` picks; see :func:`hardware_env`). A program that needs CUDA
    runs on CUDA with any GPU at all, over gloo when its processes share GPUs (NCCL
    needs a GPU per process). The record takes what the ranks really used
    (``conftest.ran_on``) over this expectation.
    """
    version, _, _ = _torch_env()
    device, backend, device_count = device_plan(processes, *gpus_available(nnodes, batch), needs_cuda)
    return {
        "torch": version,
        "python": ".".join(platform.python_version_tuple()[:2]),
        "backend": backend,
        "device": device,
        "device_count": device_count,
    }


def device_plan(processes: int, gpus: int, nccl: bool, needs_cuda: bool) -> tuple[str, str, int]:
    """``(device, backend, GPUs used)`` of a job of ``processes`` processes given ``gpus``
    CUDA GPUs: NCCL needs a GPU per process (its communicators refuse two ranks on one
    device); a program that needs CUDA shares fewer GPUs over gloo, whose collectives
    take CUDA tensors (SyncBatchNorm has a gloo path: torch/nn/modules/_functions.py);
    any other program runs on CPU and gloo."""
    if nccl and gpus >= processes:
        return "cuda", "nccl", processes
    if needs_cuda and gpus >= 1:
        return "cuda", "gloo", min(gpus, processes)
    return "cpu", "gloo", 0


def effective_line(spec: RunSpec, config: pytest.Config, node: int = 0) -> LaunchLine:
    """The page's launch line, with ``--nproc-per-node`` replaced when the option asks."""
    line = spec.lines[node]
    override = config.getoption("--nproc-per-node")
    return line if override is None else line.with_nproc_per_node(override)


def effective_command(spec: RunSpec, config: pytest.Config, node: int = 0) -> tuple[str, ...]:
    """The command words of :func:`effective_line` (for ``torchrun_shape``)."""
    return effective_line(spec, config, node).argv


def hardware_env(nproc_per_node: int, nnodes: int = 1, needs_cuda: bool = False, batch: bool = False) -> list[dict[str, str]]:
    """The device selection of each node of a job (``nnodes`` terminals).

    One node: nothing is set; each program's own device rule (``choose_device``) picks
    NCCL with a GPU per process or else the CPU and gloo, exactly as on a reader's
    machine. Several nodes on this one machine: with a GPU for every process of every
    node, each node sees its own block of GPUs; with too few, every node sees none (two
    simulated nodes must not pick the same GPUs), unless the program needs CUDA (it then
    sees them all and shares them). Under Slurm (see :func:`on_slurm`) a CUDA job's GPUs are Slurm's to
    give (nothing set); a CPU job sees none where this machine or the partition has GPUs.
    """
    _, count, _ = _torch_env()
    cuda = environment(nproc_per_node * nnodes, nnodes, needs_cuda, batch)["device"] == "cuda"
    if on_slurm(batch):
        gpus, _ = gpus_available(nnodes, batch)
        hide = not cuda and (count > 0 or gpus > 0)
        return [{"CUDA_VISIBLE_DEVICES": ""} if hide else {} for _ in range(nnodes)]
    if count == 0 or nnodes == 1:
        return [{} for _ in range(nnodes)]
    if not cuda:
        return [{"CUDA_VISIBLE_DEVICES": ""} for _ in range(nnodes)]
    if nnodes == 1 or count < nproc_per_node * nnodes:
        return [{} for _ in range(nnodes)]
    return [{"CUDA_VISIBLE_DEVICES": ",".join(str(node * nproc_per_node + i) for i in range(nproc_per_node))}
            for node in range(nnodes)]


def _reverify(config) -> bool:
    return (
        config.getoption("--reverify")
        or os.environ.get("COURSE_REVERIFY", "") not in ("", "0")
        or os.environ.get("CI", "").lower() in ("1", "true", "yes")
    )


LESSON_TESTS = ROOT / "tests" / "snippets"


def named_program(module: Path) -> str | None:
    """The program a lesson's test module is named after, by the rule the build's remedy
    follows (:func:`coursekit.verification.test_for`): ``tests/snippets/test_<slug>/test_<name>.py``
    -> ``"<slug>/<name>.py"``, whether that program exists or not.

    Args:
        module: the test module's path.

    Returns:
        The program, relative to ``snippets/``; None for a module outside a lesson's
        folder (``tests/snippets/test_teardown_guard.py``, ``tests/runner/…``).
    """
    try:
        slug, name = Path(module).resolve().relative_to(LESSON_TESTS).parts
    except ValueError:
        return None
    if not (slug.startswith("test_") and name.startswith("test_") and name.endswith(".py")):
        return None
    return f"{slug[len('test_'):]}/{name[len('test_'):]}"


def verifies_problem(module: Path, marked: set[str], launches: bool) -> str | None:
    """Why a test module's ``verifies`` marker would leave a program without its record,
    or None when it is right.

    A lesson's module named after an existing program must mark that program (else its
    passing runs write no record and the build keeps saying the program changed since
    its last passing run); a marker must name an existing program whose module, by the
    build's remedy (:func:`coursekit.verification.test_for`), is this one; a module of a
    lesson that launches torchrun jobs must verify a program.

    Args:
        module: the test module's path.
        marked: the programs its ``pytest.mark.verifies(...)`` markers name.
        launches: it is marked ``torchrun`` or has a bare-run test (``conftest.bare_run_test``).

    Returns:
        One line naming the module, the problem and the remedy; None when there is none.
    """
    try:
        where = Path(module).resolve().relative_to(ROOT).as_posix()
    except ValueError:
        where = str(module)
    named = named_program(module)
    if len(marked) > 1:
        return f"{where}: verifies {len(marked)} programs ({', '.join(sorted(marked))}); keep one module per program, named after it"
    for program in marked:
        if not (SNIPPETS / program).is_file():
            return (f"{where}: pytest.mark.verifies({program!r}) names no program (there is no snippets/{program}); "
                    f"name the program it runs, relative to snippets/" + (f": {named!r}" if named and (SNIPPETS / named).is_file() else ""))
        if program != named:
            remedy = (f"mark it pytest.mark.verifies({named!r}), the program it is named after"
                      if named and (SNIPPETS / named).is_file() else f"move its tests to {test_for(program)}")
            return (f"{where}: verifies snippets/{program}, but the build tells whoever changes that program to run "
                    f"{test_for(program)}; {remedy}")
    if marked or named is None:
        return None
    if (SNIPPETS / named).is_file():
        return (f"{where}: verifies no program, so passing here writes no record of snippets/{named} and the build "
                f"keeps saying it changed since its last passing run; add pytest.mark.verifies({named!r}) to its pytestmark")
    if launches:
        folder = named.partition("/")[0]
        return (f"{where}: launches torchrun jobs but verifies no program, and there is no snippets/{named}; name the "
                f"module test_<program>.py after the program it runs and add pytest.mark.verifies('{folder}/<program>.py')")
    return None


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector):
    """A test module whose ``verifies`` marker is missing or wrong (:func:`verifies_problem`)
    fails to collect, in one line naming the module and the remedy."""
    report = yield
    if not isinstance(collector, pytest.Module) or not report.passed:
        return report
    functions = [node for node in report.result if isinstance(node, pytest.Function)]
    marked = {m.args[0] for m in collector.iter_markers("verifies") if m.args}
    marked |= {m.args[0] for f in functions for m in f.iter_markers("verifies") if m.args}
    launches = (collector.get_closest_marker("torchrun") is not None
                or any(f.get_closest_marker("torchrun") or "bare_run_index" in f.fixturenames for f in functions))
    problem = verifies_problem(collector.path, marked, launches)
    if problem is None:
        return report
    return pytest.CollectReport(report.nodeid, "failed", problem, [], report.sections)


def _program_of(item) -> str | None:
    """The program a test verifies: its module's ``verifies`` marker."""
    marker = item.get_closest_marker("verifies")
    return marker.args[0] if marker else None


def _shape(spec: RunSpec, config) -> tuple[int, int]:
    return launch_shape(effective_line(spec, config), spec.program.parent)


def _environment(spec: RunSpec, config) -> dict:
    nproc, nnodes = _shape(spec, config)
    return environment(nproc * nnodes, nnodes, spec.cuda_gpus > 0, spec.lines[0].submits is not None)


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
        if config.getoption("--cuda-only") and _environment(spec, config)["device"] != "cuda":
            deselected.append(item)
            continue
        kept.append(item)
        nproc, nnodes = _shape(spec, config)
        item.user_properties.append(("verifies", program))
        if "bare_run_index" in getattr(item, "fixturenames", ()):
            item.user_properties.append(("bare", True))
        env = _environment(spec, config)
        count, _ = gpus_available(nnodes, spec.lines[0].submits is not None)
        version = tuple(int(part) for part in _torch_env()[0].split(".")[:len(spec.torch_min)] if part.isdigit())
        if spec.torch_min and version < spec.torch_min:
            needed = ".".join(map(str, spec.torch_min))
            item.add_marker(pytest.mark.skip(reason=f"Requires: [torch>={needed}] (this machine has {_torch_env()[0]})"))
            continue
        if spec.cuda_gpus and count < spec.cuda_gpus:
            where = "the Slurm partition's nodes have" if on_slurm(spec.lines[0].submits is not None) else "this machine has"
            item.add_marker(pytest.mark.skip(reason=f"Requires: [CUDA GPUs>={spec.cuda_gpus}] ({where} {count})"))
            continue
        if _reverify(config):
            continue
        env_class = environment_class(env["device"], env["backend"])
        current = status(program, SNIPPETS, records).current.get(record_key(machine_platform(), env_class))
        if current is not None and current.nproc_per_node == nproc:
            item.add_marker(pytest.mark.skip(
                reason=f"already verified: {program} sha256 {current.sha256[:12]} on {machine_platform()} {env_class}, "
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
    outcome = _OUTCOMES.setdefault(program, {"passed": 0, "failed": 0, "bare": 0, "output": None, "ran_on": {},
                                             "module": None})
    outcome["module"] = report.nodeid.split("::")[0]  # the program's own test module
    if report.failed:
        outcome["failed"] += 1
    elif report.passed and report.when == "call":
        outcome["passed"] += 1
        if props.get("bare"):
            outcome["bare"] += 1
        if props.get("output") is not None:
            outcome["output"] = props["output"]
        if props.get("ran_on"):
            outcome["ran_on"] = props["ran_on"]


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
        env = _environment(spec, session.config)
        ran = outcome["ran_on"]
        if not ran and spec.outcome != "passes" and env["device"] == "cuda":
            continue  # a break-it job that never reached destroy_process_group: what it ran on is unknown
        if ran:  # what the ranks reported beats what was expected
            env.update(backend=ran["backend"], device=ran["device"], device_count=ran["device_count"])
            nproc = ran["processes"] // nnodes
        digest, files = content_hash(SNIPPETS / program, SNIPPETS)
        record = Record(sha256=digest, files=files, nproc_per_node=nproc, nnodes=nnodes, test=outcome["module"],
                        bare_runs=outcome["bare"], output=outcome["output"] or {},
                        launcher="slurm" if on_slurm(spec.lines[0].submits is not None) else "local",
                        checks="claims" if outcome["passed"] > outcome["bare"] else "bare",
                        platform=machine_platform(), **env)
        records.setdefault(program, {})[record.key] = record
    save_records(SNIPPETS, records, machine_platform())  # this platform's file, only if something changed
