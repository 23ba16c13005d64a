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

A long line may continue over several physical lines, each but the last ending in a
backslash, as a reader pastes it into bash (bash(1), "QUOTING": a backslash-newline is a
line continuation): the logical line keeps the backslash-newlines in its ``text`` (so
``bash -c`` runs what the page shows), and its words are those of the joined line.

A launch line may also submit a Slurm batch script of the program's folder,
``sbatch [options] slurm_train.sbatch`` (:class:`BatchScript`): the script is then part of
the program's content (:func:`launch_files`), its nodes come from ``--nodes`` (the line's
options first, then the script's ``#SBATCH`` lines) and its processes per node from the
``--nproc-per-node`` of the ``torchrun`` it runs (:func:`launch_shape`).

Optional docstring lines:

* ``requires: cuda>=N`` -- the program needs N CUDA devices;
* ``requires: torch>=X.Y`` -- what the page says holds from that torch release on (e.g. a
  launcher default that changed); on an older torch its tests are skipped, saying so;
* ``outcome: fails`` or ``outcome: hangs`` -- a "break it" program: what the page says
  happens (it exits non-zero, or it blocks until stopped) is what is verified;
* ``blocked-in: WHO: WHERE`` (``outcome: hangs`` only, one line per party) -- where the
  page says the hang holds each process (:class:`BlockedIn`): ``WHO`` is ``rank N``,
  ``other ranks`` (every rank not named) or ``every agent`` (the torchrun agents, for a
  job whose workers never start); ``WHERE`` is, for ranks, a piece of the program's code
  found on exactly one of its lines (the innermost frame of the program on that rank's
  stack), for agents the qualified name of a function on the agent's stack
  (``DynamicRendezvousHandler.next_rendezvous``). The runner stops such a job as soon as
  every party has been seen there long enough (``tests/torchjob.py``, ``SETTLE_S``)
  instead of waiting out its time limit.
"""
from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

__all__ = ["BatchScript", "BlockedIn", "LaunchLine", "OUTCOMES", "RunSpec", "RunSpecError", "batch_script", "launch_files",
           "launch_shape", "owner_of", "parse_line", "read_spec", "torchrun_shape"]

_SECTION = re.compile(r"^[ \t]*-{1,}8<-{1,}[ ]+\[start:launch\][ \t]*\n(?P<body>.*?)^[ \t]*-{1,}8<-{1,}[ ]+\[end:launch\]", re.M | re.S)
_LIMIT = re.compile(r"^[ \t]*time-limit:[ \t]*(?P<seconds>\d+(?:\.\d+)?)[ \t]*s[ \t]*$", re.M)
_CUDA = re.compile(r"^[ \t]*requires:[ \t]*cuda(?:[ \t]*>=[ \t]*(?P<gpus>\d+))?[ \t]*$", re.M)
_TORCH = re.compile(r"^[ \t]*requires:[ \t]*torch[ \t]*>=[ \t]*(?P<version>\d+(?:\.\d+)*)[ \t]*$", re.M)
_OUTCOME = re.compile(r"^[ \t]*outcome:[ \t]*(?P<outcome>\S+)[ \t]*$", re.M)
_BLOCKED = re.compile(r"^[ \t]*blocked-in:[ \t]*(?P<who>rank[ \t]+\d+|other ranks|every agent)[ \t]*:[ \t]*(?P<where>\S.*?)[ \t]*$", re.M)
_BLOCKED_ANY = re.compile(r"^[ \t]*blocked-in:.*$", re.M)
_ASSIGNMENT = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)=(?P<value>.*)$", re.S)
# $NAME, ${NAME} and ${NAME:-default}: the variables a reader may set for a launch line
_SHELL_VAR = re.compile(r"\$(?:\{(?P<braced>[A-Za-z_]\w*)(?::-[^}]*)?\}|(?P<bare>[A-Za-z_]\w*))")
_NPROC = re.compile(r"--nproc[-_]per[-_]node(?:=|[ \t]+)\S+")
_SBATCH = re.compile(r"^#SBATCH[ \t]+(?P<options>.*?)[ \t]*(?:#.*)?$", re.M)
# a backslash-newline: bash's line continuation (a backslash escaping the newline)
_CONTINUATION = re.compile(r"\\\n")
_DEFAULTED = re.compile(r"\$\{[A-Za-z_]\w*:-(?P<default>[^}]*)\}")

OUTCOMES = ("passes", "fails", "hangs")


class RunSpecError(Exception):
    """A program's launch spec is missing or malformed; the message names file and remedy."""


@dataclass(frozen=True)
class LaunchLine:
    """One line of a launch section: what one node's terminal runs.

    Attributes:
        text: the line exactly as the page shows it (run with ``bash -c``), with its
            backslash-newline continuations if it has any.
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

    @property
    def submits(self) -> str | None:
        """The batch script an ``sbatch`` line submits (its first word that is not an
        option or an option's value), or None for any other command."""
        if not self.argv or Path(self.argv[0]).name != "sbatch":
            return None
        words, i = self.argv[1:], 0
        while i < len(words):
            word = words[i]
            if not word.startswith("-"):
                return word
            # a short option given its value as the next word (-N 2, -p gpu); long ones use '='
            i += 2 if len(word) == 2 and word[1] in _SBATCH_SHORT_WITH_VALUE else 1
        return None

    def with_nproc_per_node(self, nproc: int) -> "LaunchLine":
        """The same line with ``--nproc-per-node`` set to ``nproc`` (the ``--nproc-per-node``
        option of the test suite); every other byte unchanged."""
        return parse_line(_NPROC.sub(f"--nproc-per-node={nproc}", self.text))


# sbatch's short options that take a value (sbatch(1)); the others are flags.
_SBATCH_SHORT_WITH_VALUE = frozenset("ABDGLMNSacdeijkmnopqtw")


def parse_line(text: str) -> LaunchLine:
    """Split a launch line into assignments and command.

    Args:
        text: one logical line; a backslash-newline in it is a line continuation, read as
            a space (what bash does), and kept in the returned ``text``.

    Raises:
        RunSpecError: the line has no command after its assignments.
    """
    words = shlex.split(_CONTINUATION.sub(" ", text), posix=True)
    env = []
    while words and (m := _ASSIGNMENT.match(words[0])):
        env.append((m.group("name"), m.group("value")))
        words.pop(0)
    if not words:
        raise RunSpecError(f"launch line {text!r} has no command; write e.g. 'torchrun --standalone --nproc-per-node=2 train.py'")
    return LaunchLine(text.strip(), tuple(env), tuple(words))


@dataclass(frozen=True)
class BlockedIn:
    """Where a hang-by-design program holds one party of its job (a ``blocked-in:`` line).

    Attributes:
        who: ``"rank N"``, ``"other ranks"`` or ``"every agent"``.
        where: for ranks, the piece of code as the docstring gives it; for agents, a
            function's qualified name as Python reports it (``co_qualname``).
        line: the program's line (1-based) that holds ``where``; None for agents.
    """

    who: str
    where: str
    line: int | None = None

    @property
    def rank(self) -> int | None:
        """The rank a ``rank N`` line names; None for the others."""
        return int(self.who.split()[1]) if self.who.startswith("rank ") else None


def _code_line(program: Path, text: str, where: str) -> int:
    """The one line of the program's code (after its docstring) holding ``where``."""
    import ast

    try:
        body = ast.parse(text).body
    except SyntaxError as exc:
        raise RunSpecError(f"{program}: cannot be parsed to find its blocked-in lines ({exc}); fix the program") from None
    start = body[0].end_lineno if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) else 0
    found = [i + 1 for i, line in enumerate(text.splitlines()) if i >= start and where in line]
    if len(found) != 1:
        raise RunSpecError(f"{program}: 'blocked-in: ... {where}' matches {len(found)} lines of its code "
                           f"({found or 'none'}); quote a piece of exactly one line")
    return found[0]


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
        torch_min: the oldest torch release the page's claims hold for, as numbers
            (``(2, 13)``); empty when any supported torch will do.
        blocked_in: for ``outcome: hangs``, where the page says each party is held
            (:class:`BlockedIn`); empty when the program does not say.
    """

    program: Path
    lines: tuple[LaunchLine, ...]
    time_limit_s: float
    cuda_gpus: int = 0
    outcome: str = "passes"
    torch_min: tuple[int, ...] = ()
    blocked_in: tuple[BlockedIn, ...] = ()

    @property
    def commands(self) -> tuple[tuple[str, ...], ...]:
        """The command words of each launch line (assignments left out)."""
        return tuple(line.argv for line in self.lines)

    @property
    def variables(self) -> frozenset[str]:
        """Every environment variable the page's launch lines set or read."""
        return frozenset().union(*(line.variables for line in self.lines))


def _logical_lines(program: Path, body: str) -> list[str]:
    """The launch section's logical lines: a physical line ending in a backslash continues
    on the next one (joined with the backslash-newline kept); blank lines are skipped.

    Raises:
        RunSpecError: the section's last line ends in a backslash (it continues nowhere).
    """
    logical, current = [], []
    for physical in body.splitlines():
        if not current and not physical.strip():
            continue
        current.append(physical)
        if not physical.endswith("\\"):
            logical.append("\n".join(current))
            current = []
    if current:
        raise RunSpecError(f"{program}: the launch section's last line {current[-1].strip()!r} ends in a "
                           "backslash, which continues it onto the end marker; remove that backslash")
    return logical


def read_spec(program: Path) -> RunSpec:
    """Read the launch spec from a program's docstring.

    Args:
        program: the ``.py`` file.

    Returns:
        Its :class:`RunSpec`.

    Raises:
        RunSpecError: no launch section, no ``time-limit: N s`` line, an empty launch
            section, a launch section whose last line ends in a backslash, an ``outcome:`` other than those in :data:`OUTCOMES`, or a
            ``blocked-in:`` line that is malformed, names a party twice, quotes code found
            on no line or on several, or belongs to a program that does not hang.
    """
    text = Path(program).read_text(encoding="utf-8")
    section = _SECTION.search(text)
    if section is None:
        raise RunSpecError(f"{program}: no launch section; add '--8<-- [start:launch]' … '--8<-- [end:launch]' with the torchrun command to its docstring")
    try:
        lines = tuple(parse_line(line) for line in _logical_lines(program, section.group("body")))
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
    torch_min = _TORCH.search(text)
    minimum = tuple(int(part) for part in torch_min.group("version").split(".")) if torch_min else ()
    blocked = []
    for m in _BLOCKED_ANY.finditer(text):
        parsed = _BLOCKED.fullmatch(m.group(0))
        if parsed is None:
            raise RunSpecError(f"{program}: {m.group(0).strip()!r} is not 'blocked-in: rank N|other ranks|every agent: WHERE'; fix that line")
        who, where = " ".join(parsed["who"].split()), parsed["where"]
        if any(b.who == who for b in blocked):
            raise RunSpecError(f"{program}: two 'blocked-in: {who}:' lines; keep one")
        blocked.append(BlockedIn(who, where, None if who == "every agent" else _code_line(program, text, where)))
    if blocked and outcome != "hangs":
        raise RunSpecError(f"{program}: 'blocked-in:' lines belong to a program with 'outcome: hangs', not '{outcome}'; remove them")
    return RunSpec(Path(program), lines, float(limit.group("seconds")), gpus, outcome, minimum, tuple(blocked))


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


@dataclass(frozen=True)
class BatchScript:
    """A Slurm batch script that a launch line submits.

    Attributes:
        path: the script (in the program's folder).
        nodes: nodes the job asks for: ``--nodes``/``-N`` of the launch line, else of the
            script's ``#SBATCH`` lines (sbatch's own precedence), else 1; the minimum of a
            ``MIN-MAX`` range.
        nproc_per_node: the ``--nproc-per-node`` of the ``torchrun`` the script runs, a
            number or ``${NAME:-N}`` (read as N: what it is where Slurm leaves NAME unset,
            e.g. ``${SLURM_GPUS_ON_NODE:-2}`` on nodes without GPUs).
        torchrun: that ``torchrun`` command's words (continuation lines joined).
    """

    path: Path
    nodes: int
    nproc_per_node: int
    torchrun: tuple[str, ...]


def _nodes(options: list[str]) -> int | None:
    found = None
    for i, word in enumerate(options):
        value = None
        if word.startswith("--nodes="):
            value = word.split("=", 1)[1]
        elif word in ("-N", "--nodes") and i + 1 < len(options):
            value = options[i + 1]
        elif word.startswith("-N") and len(word) > 2:
            value = word[2:]
        if value is not None:
            found = int(value.split("-")[0])
    return found


def batch_script(line: LaunchLine, folder: Path) -> BatchScript | None:
    """The batch script an ``sbatch`` launch line submits, read from ``folder``; None for
    a line that submits nothing.

    Raises:
        RunSpecError: the script is missing, runs no ``torchrun``, or its
            ``--nproc-per-node`` is neither a number nor ``${NAME:-N}``.
    """
    name = line.submits
    if name is None:
        return None
    path = Path(folder) / name
    if not path.is_file():
        raise RunSpecError(f"{path}: the launch line {line.text!r} submits it, but there is no such file; put the batch script beside the program")
    text = path.read_text(encoding="utf-8")
    script_options: list[str] = []
    for m in _SBATCH.finditer(text):
        script_options += shlex.split(m.group("options"))
    line_options = list(line.argv[1:line.argv.index(name)])
    nodes = _nodes(line_options) or _nodes(script_options) or 1
    joined = re.sub(r"\\\n", " ", text)
    command = next((l for l in joined.splitlines() if re.search(r"(^|\s)torchrun(\s|$)", l) and not l.lstrip().startswith("#")), None)
    if command is None:
        raise RunSpecError(f"{path}: the batch script runs no torchrun; start one agent per node with 'srun torchrun ...'")
    words = shlex.split(command, comments=True)
    words = tuple(words[words.index("torchrun"):])
    nproc = None
    for i, word in enumerate(words):
        if _NPROC.fullmatch(word) or (word in ("--nproc-per-node", "--nproc_per_node") and i + 1 < len(words)):
            value = word.split("=", 1)[1] if "=" in word else words[i + 1]
            value = _DEFAULTED.sub(lambda m: m.group("default"), value)
            if not value.isdigit():
                raise RunSpecError(f"{path}: torchrun's --nproc-per-node is {value!r}; write a number or ${{NAME:-N}} so the test knows the processes per node")
            nproc = int(value)
    if nproc is None:
        raise RunSpecError(f"{path}: its torchrun has no --nproc-per-node; give the processes per node")
    return BatchScript(path, nodes, nproc, words)


def launch_shape(line: LaunchLine, folder: Path) -> tuple[int, int]:
    """``(processes per node, nodes)`` of a launch line run from ``folder``: of its
    ``torchrun`` (:func:`torchrun_shape`), or of the batch script it submits.

    Raises:
        RunSpecError: as :func:`batch_script`; ValueError: as :func:`torchrun_shape`.
    """
    batch = batch_script(line, folder)
    if batch is not None:
        return batch.nproc_per_node, batch.nodes
    return torchrun_shape(line.argv)


def launch_files(program: Path) -> list[Path]:
    """Files of the program's folder that its launch lines name, other than the program
    itself (a batch script the line submits): part of what the page shows and the test
    runs, so part of the program's content. Empty for a file without a launch spec."""
    program = Path(program)
    try:
        spec = read_spec(program)
    except RunSpecError:
        return []
    names = {word for line in spec.lines for word in line.argv}
    return sorted(p for p in (program.parent / n for n in names) if p != program and p.is_file())


def owner_of(path: Path) -> Path | None:
    """The program whose launch lines name ``path`` (a batch script), from the ``.py``
    files of its folder; ``path`` itself for a program; None if no program names it."""
    path = Path(path)
    if path.suffix == ".py":
        return path
    for program in sorted(path.parent.glob("*.py")):
        if path in launch_files(program):
            return program
    return None
