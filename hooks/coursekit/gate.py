"""The publish gate: badge every included code block with how its program was verified.

:func:`add_badges` is pure apart from reading ``snippets/``: it takes a page's Markdown
(any language) and returns it with a badge paragraph after each fenced block that
includes a snippet, plus the problems a build must report.
"""
from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path

from po_i18n.filecache import StatCache
from po_i18n.interface import Interface
from po_i18n.project import Project

from .course_strings import (ALSO_BARE, ALSO_VERIFIED, AWAITING_GPU, BACKEND_ON, BACKEND_ON_GPUS, HOW_VERIFIED,
                             NCCL_AWAITING, NOT_VERIFIED, ON_SLURM, OUTPUT_ATTEMPT, OUTPUT_NOTHING, OUTPUT_ORDER,
                             OUTPUT_PLACEHOLDERS, OUTPUT_RANK, OUTPUT_TITLE, PROCESSES, VERIFIED, VERIFIED_FAILS,
                             VERIFIED_HANGS)
from .runspec import RunSpecError, owner_of, read_spec
from .verification import Record, load_records, status, test_for, verified_records

__all__ = ["GateResult", "add_badges", "commands_not_shown", "shown_programs", "VERIFICATION_PAGE"]

VERIFICATION_PAGE = "verification.md"  # the page every badge links to
_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})")
_INCLUDE = re.compile(r"""^[ \t]*-{1,}8<-{1,}[ \t]+(?P<q>["'])(?P<target>[^"']+)(?P=q)""")
_TITLE = re.compile(r'\btitle="(?P<title>[^"]+)"')  # pymdownx.highlight's block title option
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#!|])")
_DEVICE = {"cpu": "CPU", "cuda": "CUDA"}
_OUTCOME = {"passes": VERIFIED, "fails": VERIFIED_FAILS, "hangs": VERIFIED_HANGS}  # runspec's outcome: line
_BACKEND = {"gloo": "gloo", "nccl": "NCCL"}


@dataclass
class GateResult:
    """The page with badges, and one line per problem (each a build warning)."""

    markdown: str
    problems: list[str] = field(default_factory=list)
    # each block title (``title="train.py"``) by the program its block is cut from (a batch
    # script's block by the program that submits it); a title two programs share is left out
    titles: dict[str, str] = field(default_factory=dict)


def _escape(text: str) -> str:
    """Translated text is untrusted: no Markdown or HTML of its own inside a badge."""
    return _MD_SPECIAL.sub(r"\\\1", text)


def _describe(record: Record, ui: Interface) -> str:
    backend = _BACKEND.get(record.backend, record.backend)
    if record.device == "cuda":
        return ui.text(BACKEND_ON_GPUS, count=record.device_count, backend=backend)
    return ui.text(BACKEND_ON, backend=backend, device=_DEVICE.get(record.device, record.device))


def _run(record: Record, ui: Interface) -> list[str]:
    """How a record's job ran: ``[Slurm, N nodes,] torchrun N processes, backend on device``."""
    parts = [ui.text(ON_SLURM, count=record.nnodes)] if record.launcher == "slurm" else []
    return parts + [f"torchrun {ui.text(PROCESSES, count=record.nproc_per_node * record.nnodes)}", _describe(record, ui)]


def _version(record: Record) -> tuple[int, ...]:
    return tuple(int(part) if part.isdigit() else 0 for part in re.split(r"[.+]", record.torch))


def _best(records: list[Record]) -> Record | None:
    """The record a badge leads with: NCCL over gloo, then the newest torch, then by platform."""
    ranked = sorted(records, key=lambda rec: (rec.backend != "nccl", tuple(-v for v in _version(rec)), rec.platform))
    return ranked[0] if ranked else None


def _machine(record: Record) -> str:
    """The machine part of a record's platform (:func:`coursekit.verification.platform_name`):
    ``cuda-1xnvidia-h100-80gb-hbm3-x86_64`` without its torch version."""
    return record.platform.rsplit("-torch", 1)[0]


# A page shows a program in several blocks, and every language shows them again.
_spec = StatCache(read_spec)


def _badge(program: str, project: Project, ui: Interface, link: str, records) -> tuple[str, str | None, Record | None]:
    """(badge Markdown, problem or None, the record the badge describes or None) for one program."""
    snippets = project.root / "snippets"
    title = ui.text(HOW_VERIFIED).replace('"', "'")
    main = None
    program = _program_of(program, snippets)  # a batch script is verified with the program that submits it
    try:
        spec = _spec(snippets / program)
    except (RunSpecError, FileNotFoundError) as exc:
        text, css, problem = f"✗ {ui.text(NOT_VERIFIED)}", "course-badge--unverified", str(exc)
    else:
        st = status(program, snippets, records)
        full = verified_records(st)
        cuda = _best([rec for rec in full.values() if rec.device == "cuda"])
        cpu = _best([rec for rec in full.values() if rec.device == "cpu"])
        if spec.cuda_gpus > 0 and cuda is None:
            text = f"⧗ {ui.text(AWAITING_GPU, count=spec.cuda_gpus)}"
            css, problem = "course-badge--awaiting", None
        elif not st.verified:
            text, css = f"✗ {ui.text(NOT_VERIFIED)}", "course-badge--unverified"
            digest_matches = any(rec.sha256 == st.digest for rec in records.get(program, {}).values())
            why = ("has never passed a bare run (its page's launch line, without the test harness)" if digest_matches
                   else "changed since its last passing run" if st.stale else "has no passing run yet")
            problem = f"snippet 'snippets/{program}' {why}; run: .venv/bin/python -m pytest {test_for(program)}"
        else:
            main = cuda if spec.cuda_gpus > 0 else (cpu or cuda)
            parts = [ui.text(_OUTCOME[spec.outcome]), *_run(main, ui), f"torch {main.torch}"]
            if main.device == "cuda" and main.backend != "nccl":  # processes shared GPUs over gloo
                parts.append(ui.text(NCCL_AWAITING, count=main.nproc_per_node * main.nnodes))
            for _, other in sorted(st.current.items()):
                if other is main:
                    continue
                run = ", ".join([*_run(other, ui), f"torch {other.torch}"])  # every record names its torch
                if _machine(other) != _machine(main):
                    run += f", {_machine(other)}"
                parts.append(ui.text(ALSO_VERIFIED if other.checks == "claims" else ALSO_BARE, run=run))
            text, css, problem = "✓ " + " · ".join(parts), "course-badge--verified", None
    badge = f'[{_escape(text)}]({link} "{_escape(title)}"){{ .course-badge .{css} }}'
    return badge, problem, main


_RANK = re.compile(r"^rank (?P<rank>\d+)(?: · attempt (?P<attempt>\d+))?$")
_PLACEHOLDERS = ("<port>", "<pid>", "<id>", "<host>", "<tmp>", "<time>")  # tests/run_output.py


def verified_output(record: Record, ui: Interface, indent: str = "") -> str:
    """What the verified run printed, as a collapsed details block: each rank's lines under its label.

    Ranks are stacked, not put in content tabs: Material mounts every tab set on load (it
    measures each label for the active-tab indicator), and the eleven sets of a lesson's
    closed output blocks cost about 250 ms of Lighthouse's blocking time (4x CPU
    throttling) for content no reader had opened.

    The output comes from the record itself (``Record.output``), so it belongs to the
    exact content the badge vouches for: a changed program has no current record and
    therefore shows no output. Returns pymdownx blocks Markdown (details, labelled
    paragraphs, fenced text); the lines are program output, never Markdown of their own.
    """
    processes = ui.text(PROCESSES, count=record.nproc_per_node * record.nnodes)
    slurm = [ui.text(ON_SLURM, count=record.nnodes)] if record.launcher == "slurm" else []
    title = " · ".join((ui.text(OUTPUT_TITLE), *slurm, processes, _describe(record, ui), f"torch {record.torch}"))
    lines = [f"{indent}//// details | {_escape(title)}", f"{indent}    type: course-output", ""]
    printed = [text for text in record.output.values() if text]
    if any(p in line for text in printed for line in text for p in _PLACEHOLDERS):
        names = ui.join_list([f"`{p}`" for p in _PLACEHOLDERS if any(p in line for text in printed for line in text)])
        lines += [f"{indent}{ui.before(_escape(ui.text(OUTPUT_PLACEHOLDERS)), names)}", ""]
    if len(record.output) > 1:
        lines += [f"{indent}{_escape(ui.text(OUTPUT_ORDER))}", ""]
    for label, text in record.output.items():
        m = _RANK.match(label)
        if m is None:
            name = label
        elif m["attempt"] is None:
            name = ui.text(OUTPUT_RANK, rank=int(m["rank"]))
        else:
            name = ui.text(OUTPUT_ATTEMPT, rank=int(m["rank"]), attempt=int(m["attempt"]))
        lines += [f"{indent}{_escape(name)}", f"{indent}{{: .course-output__rank }}", ""]
        if text:
            ticks = "`" * max(3, 1 + max((len(t) - len(t.lstrip("`")) for t in text), default=0))
            # no line numbers (pymdownx.highlight's linenums="0"): this is output, not code to copy
            lines += [f'{indent}{ticks} text linenums="0"', *(f"{indent}{t}" for t in text), f"{indent}{ticks}"]
        else:
            lines.append(f"{indent}{_escape(ui.text(OUTPUT_NOTHING))}")
        lines.append("")
    lines.append(f"{indent}////")
    return "\n".join(lines) + "\n"


def add_badges(markdown: str, page: str, project: Project, ui: Interface) -> GateResult:
    """Add a verification badge after every fenced code block that includes a snippet.

    Args:
        markdown: the page source (already translated, if it is a translation).
        page: the page's path relative to docs/ (``"ddp-basics.md"``), for links and messages.
        project: the project (where ``snippets/`` and its records are).
        ui: interface strings in the page's language.

    Returns:
        A :class:`GateResult`; ``problems`` holds one line per unverified program, of
        the form ``snippet 'snippets/x/y.py' changed since its last passing run; run:
        pytest tests/snippets/test_x.py``; ``titles`` maps each block title to its program.
    """
    records = load_records(project.root / "snippets")
    link = posixpath.relpath(VERIFICATION_PAGE, posixpath.dirname(page) or ".")
    lines = markdown.splitlines(keepends=True)
    out: list[str] = []
    result = GateResult(markdown)
    fence: tuple[str, str] | None = None  # (indent, fence chars) of the open block
    programs: list[str] = []
    launches: set[str] = set()  # programs whose launch section the open block includes
    title: str | None = None  # the open block's title
    titled: dict[str, set[str]] = {}
    for i, line in enumerate(lines):
        out.append(line)
        stripped = line.rstrip("\r\n")
        opener = _FENCE.match(stripped)
        if fence is None:
            if opener:
                fence, programs, launches = (opener.group("indent"), opener.group("fence")), [], set()
                named = _TITLE.search(stripped)
                title = named.group("title") if named else None
            continue
        include = _INCLUDE.match(stripped)
        if include:
            program, _, section = include.group("target").partition(":")
            if program not in programs:
                programs.append(program)
            if section == "launch":
                launches.add(program)
            continue
        if opener and stripped.strip() == stripped.strip()[0] * len(stripped.strip()) and stripped.strip().startswith(fence[1]):
            indent = fence[0]
            fence = None
            if not programs:
                continue
            if title is not None:
                titled.setdefault(title, set()).update(_program_of(program, project.root / "snippets") for program in programs)
            if not line.endswith("\n"):
                out.append("\n")
            out.append("\n")
            for n, program in enumerate(programs):
                badge, problem, record = _badge(program, project, ui, link, records)
                out.append(("\n" if n else "") + f"{indent}{badge}\n")
                if problem:
                    result.problems.append(problem)
                elif record is not None and record.output and program in launches:
                    out.append("\n" + verified_output(record, ui, indent))
            if i + 1 < len(lines) and lines[i + 1].strip():
                out.append("\n")
    result.markdown = "".join(out)
    result.titles = {name: next(iter(owners)) for name, owners in titled.items() if len(owners) == 1}
    return result


def _program_of(target: str, snippets: Path) -> str:
    """The program an included file belongs to, under ``snippets/``: itself for a program, the
    program that submits it for a batch script (:func:`coursekit.runspec.owner_of`)."""
    owner = owner_of(snippets / target)
    return target if owner is None else owner.relative_to(snippets).as_posix()


def _has_command(program: Path) -> bool:
    """Whether ``program`` is a file with a readable launch spec."""
    try:
        _spec(program)
    except (RunSpecError, FileNotFoundError):
        return False
    return True


def _shown_programs(markdown: str, snippets: Path) -> tuple[set[str], set[str]]:
    """(programs a page shows sections of, programs whose command it shows), as paths under
    ``snippets/``. A file a program's launch line names (its batch script) counts as that
    program (:func:`coursekit.runspec.owner_of`); the command is shown by an include of the
    program's ``launch`` section, or of the whole program (its docstring holds the section)."""
    shown: set[str] = set()
    commands: set[str] = set()
    for line in markdown.splitlines():
        include = _INCLUDE.match(line)
        if include is None:
            continue
        target, _, section = include.group("target").partition(":")
        owner = owner_of(snippets / target)
        if owner is None or not _has_command(owner):
            continue  # no program's command to show (the badge reports a program without one)
        program = owner.relative_to(snippets).as_posix()
        shown.add(program)
        if program == target and section in ("launch", ""):
            commands.add(program)
    return shown, commands


def _pages_of(pages: dict[str, str], snippets: Path) -> dict[str, list[tuple[bool, str]]]:
    """``(the page does not show its command, page)`` for each page showing each program,
    sorted; programs sorted."""
    where: dict[str, list[tuple[bool, str]]] = {}
    for page, markdown in sorted(pages.items()):
        shown, commands = _shown_programs(markdown, snippets)
        for program in shown:
            where.setdefault(program, []).append((program not in commands, page))
    return {program: sorted(found) for program, found in sorted(where.items())}


def shown_programs(pages: dict[str, str], snippets: Path) -> dict[str, list[str]]:
    """The pages showing each program, those that show its command first.

    Args:
        pages: each English page's Markdown source by its path under docs/
            (``"ddp-basics.md"``); translations include the same blocks.
        snippets: the ``snippets/`` folder.

    Returns:
        The pages (paths under docs/) by program (path under ``snippets/``, a batch script
        counted as its program), programs sorted; pages showing the program's command
        first, each group sorted.
    """
    return {program: [page for _, page in found] for program, found in _pages_of(pages, snippets).items()}


def commands_not_shown(pages: dict[str, str], snippets: Path) -> list[str]:
    """One problem line per program whose sections some page shows but whose launch
    section (the command the page tells a reader to run, :mod:`coursekit.runspec`) no page
    shows.

    Args:
        pages: each English page's Markdown source by its path under docs/
            (``"ddp-basics.md"``); translations include the same blocks.
        snippets: the ``snippets/`` folder.

    Returns:
        Lines of the form ``ddp-basics.md: program 'snippets/ddp_basics/x.py' is shown
        without its command: no page includes its launch section; add a block with
        --8<-- "ddp_basics/x.py:launch" to ddp-basics.md``, sorted by program.
    """
    problems = []
    for program, found in _pages_of(pages, snippets).items():
        if all(without for without, _ in found):
            names = [page for _, page in found]
            problems.append(f"{', '.join(names)}: program 'snippets/{program}' is shown without its command: no page "
                            f"includes its launch section; add a block with --8<-- \"{program}:launch\" to {names[0]}")
    return problems
