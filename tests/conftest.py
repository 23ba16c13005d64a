"""Shared fixtures: the project's paths and running snippet programs as torchrun jobs."""
from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from types import ModuleType

import pytest

from coursekit.runspec import RunSpec, read_spec

ROOT = Path(__file__).resolve().parent.parent
SNIPPETS = ROOT / "snippets"


def torchrun_world_size(argv: tuple[str, ...] | list[str]) -> int:
    """World size of a torchrun command, parsed by torchrun's own argument parser.

    Raises:
        ValueError: the process count is not a number (``gpu``/``auto`` need a device
            count the test does not assume).
    """
    from torch.distributed.run import get_args_parser, parse_min_max_nnodes

    args = get_args_parser().parse_args(list(argv[1:]))
    min_nodes, _ = parse_min_max_nnodes(args.nnodes)
    return int(args.nproc_per_node) * min_nodes


def cuda_skip_reason(spec: RunSpec) -> str | None:
    """Why a program cannot run here, as ``Requires: [...]``, or None if it can."""
    if spec.cuda_gpus == 0:
        return None
    import torch
    import torch.distributed as dist

    have = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if have >= spec.cuda_gpus and dist.is_nccl_available():
        return None
    return f"Requires: [CUDA GPUs>={spec.cuda_gpus} + nccl] (this machine has {have} GPU(s))"


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
