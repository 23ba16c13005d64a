"""Shared fixtures: the project's paths and running snippet programs as torchrun jobs."""
from __future__ import annotations

import importlib.util
import re
import shutil
import textwrap
from pathlib import Path
from types import ModuleType

import pytest


ROOT = Path(__file__).resolve().parent.parent
SNIPPETS = ROOT / "snippets"

pytest_plugins = ["verification_plugin"]

def copy_project(into: Path, items: tuple[str, ...] = ("mkdocs.yml", "docs", "i18n", "snippets", "hooks")) -> Path:
    """Copy the parts of the project a scratch build or command needs; returns ``into``."""
    for item in items:
        src = ROOT / item
        if src.is_dir():
            shutil.copytree(src, into / item, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(src, into / item)
    return into


def copy_snippet(program: Path, into: Path) -> Path:
    """Copy a program's folder into a scratch folder so the job's files stay out of the tree."""
    target = into / program.parent.name
    shutil.copytree(program.parent, target, ignore=shutil.ignore_patterns("__pycache__", "*.pt"))
    return target / program.name


def import_program(program: Path) -> ModuleType:
    """Import a snippet program as a module (its ``main()`` is guarded and does not run)."""
    spec = importlib.util.spec_from_file_location(f"snippet_{program.parent.name}_{program.stem}", program)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_snippet(program: Path, tmp_path_factory, config, *, plugins: tuple[str, ...] = (),
                extra_env: dict[str, str] | None = None, exact_world_size: int | None = None):
    """Run a program's own launch command on a scratch copy of its folder and prove it ran.

    Args:
        program: the snippet program (its docstring holds the launch spec).
        tmp_path_factory, config: pytest's, for the scratch folder and the
            ``--nproc-per-node`` option.
        plugins: recorder modules from ``tests/harness`` to load in every worker; each
            must leave something in ``RECORD["extra"]`` on every rank.
        extra_env: variables added to the job's environment.
        exact_world_size: skip (with the reason) unless the job has exactly this many
            processes, for programs written for one world size.

    Returns:
        The :class:`torchjob.JobResult`, with ``world_size`` set, after
        :meth:`~torchjob.JobResult.check` passed and within the program's time limit.
    """
    from coursekit.runspec import read_spec, torchrun_shape
    from torchjob import run_job
    from verification_plugin import effective_command, job_env

    spec = read_spec(program)
    argv = effective_command(spec, config)
    nproc, nnodes = torchrun_shape(argv)
    if exact_world_size is not None and nproc * nnodes != exact_world_size:
        pytest.skip(f"{program.name} runs with exactly {exact_world_size} processes, not {nproc * nnodes}")
    copy = copy_snippet(program, tmp_path_factory.mktemp(program.stem))
    result = run_job(argv, copy.parent, spec.time_limit_s, {**job_env(nproc), **(extra_env or {})}, plugins=plugins)
    result.world_size = nproc * nnodes
    result.check(result.world_size)
    assert result.duration_s < spec.time_limit_s
    if plugins:
        assert all(rec["extra"] for rec in result.records.values()), f"the recorders {plugins} did not load in the workers"
    return result


@pytest.fixture(scope="session")
def root() -> Path:
    """The project root (the folder holding mkdocs.yml)."""
    return ROOT


def snippet_section(path: Path, name: str) -> str:
    """The lines of a pymdownx.snippets section, as the extension includes them
    (markers of nested sections dropped, common indentation removed)."""
    lines, inside = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if re.search(rf"--8<-- \[start:{name}\]", line):
            inside = True
        elif re.search(rf"--8<-- \[end:{name}\]", line):
            break
        elif inside and not re.search(r"--8<-- \[(start|end):", line):
            lines.append(line)
    return textwrap.dedent("\n".join(lines))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """Keep each phase's report on the item, so fixtures can act on a failed test."""
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report
