"""How a snippet program is launched, read from the program itself.

Each program's module docstring holds a ``launch`` section (between
``--8<-- [start:launch]`` and ``--8<-- [end:launch]`` markers, the syntax of
pymdownx.snippets sections) with the exact command the page shows and the test runs,
and a ``time-limit: N s`` line. One source, read by the page (as an include) and by the
test (through :func:`read_spec`).
"""
from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

__all__ = ["RunSpec", "RunSpecError", "read_spec", "torchrun_shape"]

_SECTION = re.compile(r"^[ \t]*-{1,}8<-{1,}[ ]+\[start:launch\][ \t]*\n(?P<body>.*?)^[ \t]*-{1,}8<-{1,}[ ]+\[end:launch\]", re.M | re.S)
_LIMIT = re.compile(r"^[ \t]*time-limit:[ \t]*(?P<seconds>\d+(?:\.\d+)?)[ \t]*s[ \t]*$", re.M)
_CUDA = re.compile(r"^[ \t]*requires:[ \t]*cuda(?:[ \t]*>=[ \t]*(?P<gpus>\d+))?[ \t]*$", re.M)


class RunSpecError(Exception):
    """A program's launch spec is missing or malformed; the message names file and remedy."""


@dataclass(frozen=True)
class RunSpec:
    """The launch specification of one snippet program.

    Attributes:
        program: path of the program file.
        commands: the launch commands, one per node, each as an argv list
            (``["torchrun", "--standalone", "--nproc-per-node=2", "train.py"]``).
        time_limit_s: the wall-clock limit of the whole job, in seconds.
        cuda_gpus: CUDA devices the program needs (0: runs on CPU too).
    """

    program: Path
    commands: tuple[tuple[str, ...], ...]
    time_limit_s: float
    cuda_gpus: int = 0


def read_spec(program: Path) -> RunSpec:
    """Read the launch spec from a program's docstring.

    Args:
        program: the ``.py`` file.

    Returns:
        Its :class:`RunSpec`.

    Raises:
        RunSpecError: no launch section, or no ``time-limit: N s`` line.
    """
    text = Path(program).read_text(encoding="utf-8")
    section = _SECTION.search(text)
    if section is None:
        raise RunSpecError(f"{program}: no launch section; add '--8<-- [start:launch]' … '--8<-- [end:launch]' with the torchrun command to its docstring")
    commands = tuple(tuple(shlex.split(line)) for line in section.group("body").splitlines() if line.strip())
    limit = _LIMIT.search(text)
    if limit is None:
        raise RunSpecError(f"{program}: no time limit; add a line 'time-limit: 120 s' to its docstring")
    cuda = _CUDA.search(text)
    gpus = int(cuda.group("gpus") or 1) if cuda else 0
    return RunSpec(Path(program), commands, float(limit.group("seconds")), gpus)


def torchrun_shape(argv: list[str] | tuple[str, ...]) -> tuple[int, int]:
    """``(processes per node, nodes)`` of a torchrun command, parsed by torchrun's own
    argument parser (``torch.distributed.run.get_args_parser``); nodes is the minimum
    of an elastic ``--nnodes=MIN:MAX`` range.

    Raises:
        ValueError: ``--nproc-per-node`` is ``gpu``/``auto`` (a count the test cannot assume).
    """
    from torch.distributed.run import get_args_parser, parse_min_max_nnodes

    args = get_args_parser().parse_args(list(argv[1:]))
    min_nodes, _ = parse_min_max_nnodes(args.nnodes)
    return int(args.nproc_per_node), min_nodes
