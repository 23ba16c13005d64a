"""Shared fixtures: the project's paths and running snippet programs as torchrun jobs."""
from __future__ import annotations

import importlib.util
import shutil
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
