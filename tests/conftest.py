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
