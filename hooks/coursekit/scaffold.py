"""``course new-program``: a lesson's new program and its test module, ready to run.

:func:`new_program` writes ``snippets/<lesson_module>/<name>.py`` (a bare, runnable
distributed program: its launch section and time limit in its docstring, the course's
device rule in ``choose_device``/``setup``, one all-reduce in a section a page can show)
and ``tests/snippets/test_<lesson_module>/test_<name>.py`` (the fixture running the launch
line with the harness, one test of what the program prints, the bare-run test and the
``verifies`` marker), and returns the include lines for the page. It never overwrites.
"""
from __future__ import annotations

import keyword
import re
from dataclasses import dataclass
from pathlib import Path

from .verification import RECORDS_DIR

__all__ = ["ScaffoldError", "Scaffold", "new_program"]

_NAME = re.compile(r"[a-z][a-z0-9_]*")

# The device rule of every program (README, "Writing a lesson"; tests/unit/test_device_rule.py):
# the same lines as the setup section of snippets/ddp_basics/train.py (tests/unit/test_scaffold.py).
_PROGRAM = '''\
"""{title}

The lesson docs/{page} shows this program section by section. The launch section below
is the single source of how it runs: the page shows it and the test in
tests/snippets/test_{module}/test_{name}.py runs exactly that command.

--8<-- [start:launch]
torchrun --standalone --nproc-per-node=2 {name}.py
--8<-- [end:launch]
time-limit: 120 s
"""
import os
import sys

import torch
import torch.distributed as dist


{setup}

def main() -> None:
    device = setup()
    rank = dist.get_rank()

    # --8<-- [start:all_reduce]
    total = torch.tensor([float(rank + 1)], device=device)
    dist.all_reduce(total)  # every rank now holds 1 + 2 + ... + world size
    if rank == 0:
        print(f"sum over {{dist.get_world_size()}} ranks: {{total.item():.0f}}")
    # --8<-- [end:all_reduce]

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
'''

_TEST = '''\
"""snippets/{module}/{name}.py, run exactly as docs/{page} says.

The page's claims: each gets one test below that fails when the claim is false, checked
against what the job really did (the ranks' output, the harness's records).
"""
from __future__ import annotations

import pytest

from conftest import SNIPPETS, bare_run_test, run_snippet
from torchjob import JobResult

PROGRAM = SNIPPETS / "{module}" / "{name}.py"

pytestmark = [pytest.mark.torchrun, pytest.mark.verifies("{module}/{name}.py")]


@pytest.fixture(scope="module")
def job(tmp_path_factory, pytestconfig) -> JobResult:
    return run_snippet(PROGRAM, tmp_path_factory, pytestconfig)


def test_rank_0_prints_the_sum_over_every_rank(job):
    n = job.world_size
    assert f"sum over {{n}} ranks: {{n * (n + 1) // 2}}" in job.stdout(0)


test_bare_run = bare_run_test(PROGRAM, reference="job", stdout=(r"^sum over 2 ranks: 3$",))
'''

_PACKAGE = '"""Tests of the programs of docs/{page}, one module per program."""\n'


class ScaffoldError(Exception):
    """The program cannot be scaffolded; the message names the thing, the problem and the remedy."""


@dataclass(frozen=True)
class Scaffold:
    """What :func:`new_program` wrote.

    Attributes:
        program: the new program, ``snippets/<lesson_module>/<name>.py``.
        test: its test module, ``tests/snippets/test_<lesson_module>/test_<name>.py``.
        written: every file written (the two above, and the lesson's test package's
            ``__init__.py`` when the lesson had no test folder yet), in order.
        page: the lesson's page, ``docs/<lesson>.md``.
        includes: the Markdown blocks that show the program on the page, one per section.
    """

    program: Path
    test: Path
    written: tuple[Path, ...]
    page: Path
    includes: tuple[str, ...]


SETUP_FROM = Path("snippets/ddp_basics/train.py")  # the course's device rule, which every program repeats


def _setup_section(root: Path) -> str:
    """The ``setup`` section of :data:`SETUP_FROM`, markers included, as the new program's
    own copy (a snippet stands alone; the file it is taken from is the one to change)."""
    text = (root / SETUP_FROM).read_text(encoding="utf-8")
    start = text.index("# --8<-- [start:setup]\n")
    end = text.index("# --8<-- [end:setup]\n") + len("# --8<-- [end:setup]\n")
    return text[start:end]


def _lessons(root: Path) -> list[str]:
    """The slugs of the pages that have programs."""
    return sorted(p.stem for p in (root / "docs").glob("*.md") if any((root / "snippets" / p.stem.replace("-", "_")).glob("*.py")))


def new_program(root: Path, lesson: str, name: str) -> Scaffold:
    """Write a lesson's new program and its test module (see the module docstring).

    Args:
        root: the project root (the folder holding ``mkdocs.yml``).
        lesson: the lesson's slug, as its page is named (``ddp-basics``) or as its
            programs' folder is (``ddp_basics``).
        name: the program's name, a Python module name (``rank_sum``; ``.py`` may be given).

    Returns:
        A :class:`Scaffold` naming what was written and the page's include lines.

    Raises:
        ScaffoldError: the lesson has no page ``docs/<lesson>.md`` (or is the records
            folder, ``snippets/verification/``); the name is not a
            lower-case Python module name; or the program or its test module exists
            already (nothing is written then).
    """
    root = Path(root)
    slug = lesson.removesuffix(".md").replace("_", "-")
    module = slug.replace("-", "_")
    page = root / "docs" / f"{slug}.md"
    if not page.is_file() or module == RECORDS_DIR:
        raise ScaffoldError(f"lesson '{lesson}': there is no page docs/{slug}.md; write the lesson's page first, "
                            f"or name one of the lessons: {', '.join(_lessons(root)) or 'none yet'}")
    name = name.removesuffix(".py")
    if not _NAME.fullmatch(name) or keyword.iskeyword(name):
        raise ScaffoldError(f"program name '{name}': use a lower-case Python module name (letters, digits, "
                            f"underscores; e.g. rank_sum), since its test imports it")
    program = root / "snippets" / module / f"{name}.py"
    tests = root / "tests" / "snippets" / f"test_{module}"
    test = tests / f"test_{name}.py"
    for path in (program, test):
        if path.exists():
            raise ScaffoldError(f"{path.relative_to(root)} exists already; nothing was written: choose another name, "
                                f"or edit the program and its test as they are")
    fields = {"title": f"{name}: one all-reduce over every process (replace with what this program shows).",
              "page": page.name, "module": module, "name": name, "setup": _setup_section(root)}
    written = []
    if not (tests / "__init__.py").exists():
        tests.mkdir(parents=True, exist_ok=True)
        (tests / "__init__.py").write_text(_PACKAGE.format(**fields), encoding="utf-8")
        written.append(tests / "__init__.py")
    program.parent.mkdir(parents=True, exist_ok=True)
    for path, template in ((program, _PROGRAM), (test, _TEST)):
        with path.open("x", encoding="utf-8") as out:  # "x": never overwrite, even in a race
            out.write(template.format(**fields))
        written.append(path)
    target = f"{module}/{name}.py"
    includes = (f'``` bash\n--8<-- "{target}:launch"\n```',
                *(f'``` py title="{name}.py"\n--8<-- "{target}:{section}"\n```' for section in ("setup", "all_reduce")))
    return Scaffold(program, test, tuple(written), page, includes)
