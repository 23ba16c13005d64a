"""How a snippet program is launched, read from the program itself.

Each program's module docstring holds a ``launch`` section (between
``--8<-- [start:launch]`` and ``--8<-- [end:launch]`` markers, the syntax of
pymdownx.snippets sections) with the exact command the page shows and the test runs,
and a ``time-limit: N s`` line. One source, read by the page (as an include) and by the
test (through :func:`read_spec`).

A launch line is a shell command line as a reader types it: optional ``NAME=value``
assignments, then ``torchrun`` and its arguments, which may use shell variables with
defaults (``${HEAD_ADDR:-127.0.0.1}``) for what a reader sets on a real cluster. Every
environment variable a test gives the job must be one of these: the page's environment
is the tested environment. A line is run by ``bash -c`` exactly as written.

Optional docstring lines:

* ``requires: cuda>=N`` -- the program needs N CUDA devices;
* ``outcome: fails`` or ``outcome: hangs`` -- a "break it" program: what the page says
  happens (it exits non-zero, or it blocks until stopped) is what is verified.
"""
from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

__all__ = ["LaunchLine", "OUTCOMES", "RunSpec", "RunSpecError", "parse_line", "read_spec", "torchrun_shape"]

_SECTION = re.compile(r"^[ \t]*-{1,}8<-{1,}[ ]+\[start:launch\][ \t]*\n(?P<body>.*?)^[ \t]*-{1,}8<-{1,}[ ]+\[end:launch\]", re.M | re.S)
_LIMIT = re.compile(r"^[ \t]*time-limit:[ \t]*(?P<seconds>\d+(?:\.\d+)?)[ \t]*s[ \t]*$", re.M)
_CUDA = re.compile(r"^[ \t]*requires:[ \t]*cuda(?:[ \t]*>=[ \t]*(?P<gpus>\d+))?[ \t]*$", re.M)
_OUTCOME = re.compile(r"^[ \t]*outcome:[ \t]*(?P<outcome>\S+)[ \t]*$", re.M)
_ASSIGNMENT = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)=(?P<value>.*)$", re.S)
# $NAME, ${NAME} and ${NAME:-default}: the variables a reader may set for a launch line
_SHELL_VAR = re.compile(r"\$(?:\{(?P<braced>[A-Za-z_]\w*)(?::-[^}]*)?\}|(?P<bare>[A-Za-z_]\w*))")
_NPROC = re.compile(r"--nproc[-_]per[-_]node(?:=|[ \t]+)\S+")

OUTCOMES = ("passes", "fails", "hangs")


class RunSpecError(Exception):
    """A program's launch spec is missing or malformed; the message names file and remedy."""


@dataclass(frozen=True)
class LaunchLine:
    """One line of a launch section: what one node's terminal runs.

    Attributes:
        text: the line exactly as the page shows it (run with ``bash -c``).
        env: the ``NAME=value`` assignments before the command, in order, as
            ``(name, value)`` pairs with shell quoting removed.
        argv: the command's words with shell quoting removed and variables left as
            written (``"--rdzv-endpoint=${HEAD_ADDR:-127.0.0.1}:29400"``).
    """

    text: str
    env: tuple[tuple[str, str], ...]
    argv: tuple[str, ...]

    @property
    def variables(self) -> frozenset[str]:
        """Every environment variable name the line sets or reads (``$NAME``)."""
        return frozenset(name for name, _ in self.env) | frozenset(
            m.group("braced") or m.group("bare") for m in _SHELL_VAR.finditer(self.text))

    def with_nproc_per_node(self, nproc: int) -> "LaunchLine":
        """The same line with ``--nproc-per-node`` set to ``nproc`` (the ``--nproc-per-node``
        option of the test suite); every other byte unchanged."""
        return parse_line(_NPROC.sub(f"--nproc-per-node={nproc}", self.text))


def parse_line(text: str) -> LaunchLine:
    """Split a launch line into assignments and command.

    Raises:
        RunSpecError: the line has no command after its assignments.
    """
    words = shlex.split(text, posix=True)
    env = []
    while words and (m := _ASSIGNMENT.match(words[0])):
        env.append((m.group("name"), m.group("value")))
        words.pop(0)
    if not words:
        raise RunSpecError(f"launch line {text!r} has no command; write e.g. 'torchrun --standalone --nproc-per-node=2 train.py'")
    return LaunchLine(text.strip(), tuple(env), tuple(words))


@dataclass(frozen=True)
class RunSpec:
    """The launch specification of one snippet program.

    Attributes:
        program: path of the program file.
        lines: the launch lines, as the page shows them. One line with ``--nnodes=N``
            is run on N nodes (every node types the same line); several lines are run
            together, one terminal each.
        time_limit_s: the wall-clock limit of the whole job, in seconds.
        cuda_gpus: CUDA devices the program needs (0: runs on CPU too).
        outcome: ``"passes"``, or for a "break it" program ``"fails"`` (exits non-zero)
            or ``"hangs"`` (blocks until the time limit stops it).
    """

    program: Path
    lines: tuple[LaunchLine, ...]
    time_limit_s: float
    cuda_gpus: int = 0
    outcome: str = "passes"

    @property
    def commands(self) -> tuple[tuple[str, ...], ...]:
        """The command words of each launch line (assignments left out)."""
        return tuple(line.argv for line in self.lines)

    @property
    def variables(self) -> frozenset[str]:
        """Every environment variable the page's launch lines set or read."""
        return frozenset().union(*(line.variables for line in self.lines))


def read_spec(program: Path) -> RunSpec:
    """Read the launch spec from a program's docstring.

    Args:
        program: the ``.py`` file.

    Returns:
        Its :class:`RunSpec`.

    Raises:
        RunSpecError: no launch section, no ``time-limit: N s`` line, an empty launch
            section, or an ``outcome:`` other than those in :data:`OUTCOMES`.
    """
    text = Path(program).read_text(encoding="utf-8")
    section = _SECTION.search(text)
    if section is None:
        raise RunSpecError(f"{program}: no launch section; add '--8<-- [start:launch]' … '--8<-- [end:launch]' with the torchrun command to its docstring")
    try:
        lines = tuple(parse_line(line) for line in section.group("body").splitlines() if line.strip())
    except (RunSpecError, ValueError) as exc:
        raise RunSpecError(f"{program}: {exc}") from None
    if not lines:
        raise RunSpecError(f"{program}: the launch section is empty; put the torchrun command between its markers")
    limit = _LIMIT.search(text)
    if limit is None:
        raise RunSpecError(f"{program}: no time limit; add a line 'time-limit: 120 s' to its docstring")
    cuda = _CUDA.search(text)
    gpus = int(cuda.group("gpus") or 1) if cuda else 0
    outcome = _OUTCOME.search(text)
    outcome = outcome.group("outcome") if outcome else "passes"
    if outcome not in OUTCOMES:
        raise RunSpecError(f"{program}: outcome '{outcome}' is not one of {', '.join(OUTCOMES)}; fix its 'outcome:' line")
    return RunSpec(Path(program), lines, float(limit.group("seconds")), gpus, outcome)


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
