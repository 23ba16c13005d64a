"""A broken include stops the build in one line: page and line, the include, and what the
file has or where it was looked for (hooks/include_errors.py), never a traceback.

Each test builds or serves a scratch copy of the project with planted broken includes.
"""
from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

import pytest

from conftest import copy_project
from site_server import MKDOCS, MKDOCS_ENV, preview_server

pytestmark = pytest.mark.site

SECTION = ('docs/ddp-basics.md:{line}: --8<-- "ddp_basics/train.py:setp": snippets/ddp_basics/train.py has no section '
           "'setp' (its sections: launch, setup, data, model, loader, wrap, train, save, cleanup); name one of them "
           "(did you mean 'setup'?), or mark the lines in the file with '# --8<-- [start:setp]' and "
           "'# --8<-- [end:setp]'")
FILE = ('docs/torchrun-launching.md:{line}: --8<-- "torchrun_launching/env_reprot.py:launch": there is no file '
        "torchrun_launching/env_reprot.py under the snippets base path snippets/; fix the path "
        "(did you mean torchrun_launching/env_report.py?)")


def plant(page: Path, include: str, broken: str) -> int:
    """Replace the first line that is exactly ``include`` with ``broken``; returns its line number."""
    lines = page.read_text(encoding="utf-8").split("\n")
    number = lines.index(include) + 1
    lines[number - 1] = broken
    page.write_text("\n".join(lines), encoding="utf-8")
    return number


def test_a_missing_section_or_file_stops_the_strict_build_in_one_line_each(tmp_path):
    project = copy_project(tmp_path)
    section = plant(project / "docs" / "ddp-basics.md", '--8<-- "ddp_basics/train.py:setup"',
                    '--8<-- "ddp_basics/train.py:setp"')
    missing = plant(project / "docs" / "torchrun-launching.md", '--8<-- "torchrun_launching/env_report.py:launch"',
                    '--8<-- "torchrun_launching/env_reprot.py:launch"')
    proc = subprocess.run([*MKDOCS, "build", "--strict"], cwd=project, capture_output=True, text=True, env=MKDOCS_ENV)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    for line in (SECTION.format(line=section), FILE.format(line=missing)):
        assert re.search(rf"^(ERROR +- +)?{re.escape(line)}$", out, re.M), f"{line!r} not in:\n{out}"
    assert "Traceback" not in out and "could not be" not in out and "Error reading page" not in out, out
    assert not (project / "site" / "ddp-basics").exists()  # stopped before any page was written


def _wait_for(server: subprocess.Popen, log: Path, text: str, times: int, what: str) -> str:
    deadline = time.monotonic() + 180
    while (seen := log.read_text(encoding="utf-8", errors="replace")).count(text) < times:
        assert server.poll() is None and time.monotonic() < deadline, f"{what}; the server's log:\n{seen}"
        time.sleep(0.5)
    return seen


def test_mkdocs_serve_names_the_broken_include_on_every_rebuild(tmp_path):
    """``po-i18n serve`` (``make serve``: ``mkdocs serve --dirty``) keeps serving and says
    which include is broken each time the page is saved broken, in one line."""
    project = copy_project(tmp_path)
    page = project / "docs" / "ddp-basics.md"
    good = page.read_text(encoding="utf-8")
    log = tmp_path / "serve.log"
    with preview_server(project, log) as (server, _):
        _wait_for(server, log, "Serving on", 1, "po-i18n serve did not start")
        for save in (1, 2):
            page.write_text(good, encoding="utf-8")
            number = plant(page, '--8<-- "ddp_basics/train.py:setup"', '--8<-- "ddp_basics/train.py:setp"')
            seen = _wait_for(server, log, "An error happened during the rebuild", save, f"save {save} was not rebuilt")
            assert seen.count(SECTION.format(line=number)) == save, seen
            time.sleep(1.5)  # past the watcher's debounce, so the next save is a new change
    seen = log.read_text(encoding="utf-8", errors="replace")
    assert "Traceback" not in seen and "could not be located" not in seen, seen
