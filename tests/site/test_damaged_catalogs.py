"""Damaged and hostile catalog files (issue 34): every command stays one line per problem.

A table of damaged catalogs, each planted alone in a fresh copy of a site and run through
the four commands a translator or a CI job runs: ``po-i18n check``, ``po-i18n update``,
``mkdocs build --strict`` and ``po-i18n serve`` (started, a page fetched, stopped). For
every one: the exit status says whether it failed, no output has a traceback, an absolute
path outside the project, or anything of the damaged file (a token is planted in each:
its text, the file a link points to, the header value that is wrong), and nothing outside
``i18n/`` is written (the files a link points to are unchanged, and ``po-i18n update``
changes nothing outside ``i18n/``).

The table runs on the engine's example site (``hooks/mkdocs-po-i18n/example``, the same hooks, two
languages, quick to build); the cases whose harm shows only with the course's own hooks
(plural interface strings in the badges; a page catalog that is a link) run again on a
copy of the course.
"""
from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import ROOT, copy_project, share_verdicts
from coursekit.net import free_port
from site_server import MKDOCS, MKDOCS_ENV

pytestmark = pytest.mark.site

PO_I18N = [sys.executable, "-m", "po_i18n"]
FIXTURE = ROOT / "hooks" / "mkdocs-po-i18n" / "example"
TRACEBACK = re.compile(r"Traceback \(most recent call last\)|^\w+(Error|Exception): ", re.M)


@dataclass
class Scene:
    """One planted case: the site's root, the damaged catalog, a folder outside the
    project (what links point to) and the token that must never be printed."""

    root: Path
    target: Path
    outside: Path
    token: str

    def text(self) -> str:
        return self.target.read_text(encoding="utf-8")

    def write(self, text: str, encoding: str = "utf-8") -> None:
        self.target.write_bytes(text.encode(encoding))

    def header(self, old: str, new: str) -> None:
        """Replace one header line (``"Plural-Forms: …\\n"``) by another ('' removes it)."""
        text = self.text()
        line = next(l for l in text.splitlines(keepends=True) if l.startswith(f'"{old}'))
        self.write(text.replace(line, new, 1))

    def secret_catalog(self) -> Path:
        """A valid catalog outside the project whose translations are the token."""
        path = self.outside / "secret.po"
        text = self.text()
        text = re.sub(r'(?m)^msgstr(\[\d\])? ".+"$', lambda m: f'msgstr{m.group(1) or ""} "{self.token}"', text)
        path.write_text(f"# {self.token}\n" + text, encoding="utf-8")
        return path


def _without(s: Scene, field: str) -> None:
    s.header(field, "")
    s.write(f"# {s.token}\n" + s.text())


def _plural(forms: str) -> Callable[[Scene], None]:
    def plant(s: Scene) -> None:
        s.header("Plural-Forms:", f'"Plural-Forms: {forms}\\n"\n')
        s.write(f"# {s.token}\n" + s.text())
    return plant


def _directory(s: Scene) -> None:
    s.target.unlink()
    s.target.mkdir()
    (s.target / "notes.txt").write_text(s.token, encoding="utf-8")


def _fifo(s: Scene) -> None:
    s.target.unlink()
    os.mkfifo(s.target)


def _link(to: Callable[[Scene], Path]) -> Callable[[Scene], None]:
    def plant(s: Scene) -> None:
        target = to(s)
        s.target.unlink()
        s.target.symlink_to(target)
    return plant


def _link_inside(s: Scene) -> Path:
    real = s.target.with_name("real.po.txt")
    real.write_text(f"# {s.token}\n" + s.text(), encoding="utf-8")
    return Path(real.name)


def _loop(s: Scene) -> Path:
    other = s.target.with_name("other.po")
    other.symlink_to(s.target.name)
    return Path(other.name)


def _folder_link(s: Scene) -> None:
    """The folder of a nested page catalog (``i18n/fr/guide/``) is a link to a folder outside."""
    folder = s.target.parent
    copy = s.outside / folder.name
    shutil.copytree(folder, copy)
    for po in copy.glob("*.po"):
        po.write_text(f"# {s.token}\n" + po.read_text(encoding="utf-8"), encoding="utf-8")
    shutil.rmtree(folder)
    folder.symlink_to(copy, target_is_directory=True)


def _language_link(s: Scene) -> None:
    """The whole language folder ``i18n/fr`` is a link to a copy outside."""
    folder = s.root / "i18n" / "fr"
    copy = s.outside / "fr"
    shutil.copytree(folder, copy)
    (copy / "_site.po").write_text(f"# {s.token}\n" + (copy / "_site.po").read_text(encoding="utf-8"), encoding="utf-8")
    shutil.rmtree(folder)
    folder.symlink_to(copy, target_is_directory=True)


def _with_link(s: Scene, link: Path, to: Path) -> None:
    """A link beside the catalog; the catalog itself carries the token in a comment."""
    link.symlink_to(to, target_is_directory=True)
    s.write(f"# {s.token}\n" + s.text())


def _strange_name(s: Scene) -> None:
    """A second catalog whose name holds a line break and terminal escapes (a BOM makes
    it refused, so its name is printed)."""
    odd = s.target.with_name("x\nERROR   -  fake\x1b[2K\r.po")
    odd.write_text("\ufeff" + s.text(), encoding="utf-8")
    s.write(s.text().replace("#. site name", f"# {s.token}\n#. site name", 1))


def _unreadable(s: Scene) -> None:
    s.write(f"# {s.token}\n" + s.text())
    s.target.chmod(0)


def _msgstr_beyond(s: Scene) -> None:
    s.write(s.text().replace('msgstr[2] "', f'msgstr[5] "{s.token} ', 1))


def _duplicate_header(s: Scene) -> None:
    text = s.text()
    end = text.index("\n\n")
    s.write(text[:end] + f'\n\nmsgid ""\nmsgstr ""\n"Language: fr\\n"\n"X-Note: {s.token}\\n"' + text[end:])


def _only_obsolete(s: Scene) -> None:
    entries = [e for e in s.text().split("\n\n")[1:] if "msgid_plural" not in e]
    s.write(f"# {s.token}\n" + "\n\n".join("\n".join(f"#~ {line}" for line in e.splitlines() if line.startswith(("msg", '"')))
                                           for e in entries[:3]) + "\n")


def _latin1(s: Scene) -> None:
    text = f"# {s.token}\n" + s.text().replace("charset=UTF-8", "charset=ISO-8859-1")
    s.target.write_bytes(text.encode("latin-1", "replace"))  # é is byte 0xE9: not UTF-8


def _big(s: Scene) -> None:
    line = f"# {s.token} {'x' * 100}\n".encode()
    with s.target.open("ab") as f:
        for _ in range(50 * 2**20 // len(line)):
            f.write(line)


# a page's catalog that is no catalog file / one beside them, which only po-i18n check and the
# build read / a header the build cannot use / an entry it cannot use
REFUSED, STRAY, HEADER, ENTRY = "refused", "stray", "header", "entry"
# name: (the damaged catalog, how to damage it, what kind of damage it is)
CASES: dict[str, tuple[str, Callable[[Scene], None], str]] = {
    "empty file": ("_site.po", lambda s: s.write(""), HEADER),
    "only a BOM": ("_site.po", lambda s: s.write("\ufeff"), REFUSED),
    "BOM and a valid catalog": ("_site.po", lambda s: s.write(f"\ufeff# {s.token}\n" + s.text()), REFUSED),
    "no header": ("_site.po", lambda s: s.write(f"# {s.token}\n" + s.text().split("\n\n", 1)[1]), HEADER),
    "duplicate header": ("_site.po", _duplicate_header, HEADER),
    "no Content-Type": ("_site.po", lambda s: _without(s, "Content-Type:"), HEADER),
    "Content-Type without charset": ("_site.po", lambda s: s.header("Content-Type:", '"Content-Type: text/plain\\n"\n'), HEADER),
    "charset=foo": ("_site.po", lambda s: s.header("Content-Type:", f'"Content-Type: text/plain; charset={s.token}\\n"\n'), HEADER),
    "charset=latin-1, latin-1 bytes": ("_site.po", lambda s: _latin1(s), REFUSED),
    "charset=latin-1, UTF-8 bytes": ("_site.po", lambda s: s.write(f"# {s.token}\n" + s.text().replace("charset=UTF-8", "charset=ISO-8859-1")), HEADER),
    "no Language": ("_site.po", lambda s: _without(s, "Language:"), HEADER),
    "wrong Language": ("_site.po", lambda s: s.header("Language:", f'"Language: {s.token}\\n"\n'), HEADER),
    "no Plural-Forms": ("_site.po", lambda s: _without(s, "Plural-Forms:"), HEADER),
    "Plural-Forms without plural=": ("_site.po", _plural("nplurals=3;"), HEADER),
    "nplurals=0": ("_site.po", _plural("nplurals=0; plural=0;"), HEADER),
    "huge nplurals": ("_site.po", _plural(f"nplurals={'9' * 5000}; plural=n;"), HEADER),
    "plural=n/0": ("_site.po", _plural("nplurals=3; plural=n/0;"), HEADER),
    "division by zero at n=5": ("_site.po", _plural("nplurals=3; plural=n%(n-5) ? 1 : 2;"), HEADER),
    "unparseable plural": ("_site.po", lambda s: s.header("Plural-Forms:", f'"Plural-Forms: nplurals=3; plural=n > {s.token};\\n"\n'), HEADER),
    "plural nested too deep": ("_site.po", _plural("nplurals=3; plural=" + "(" * 30 + "n" + ")" * 30 + ";"), HEADER),
    "plural out of range": ("_site.po", _plural("nplurals=3; plural=n;"), HEADER),
    "plural negative": ("_site.po", _plural("nplurals=3; plural=n-1;"), HEADER),
    "only obsolete entries": ("_site.po", _only_obsolete, HEADER),
    "NUL byte": ("_site.po", lambda s: s.write(s.text().replace('"Págé"', f'"Págé\x00{s.token}"', 1)), REFUSED),
    "escape sequence": ("_site.po", lambda s: s.write(s.text().replace('"Págé"', f'"\x1b[2J{s.token}"', 1)), REFUSED),
    "line separator": ("_site.po", lambda s: s.write(s.text().replace('"Págé"', f'"Pá\u2028{s.token}"', 1)), REFUSED),
    "a line of plain text": ("_site.po", lambda s: s.write(f"{s.token}=hunter2\n" + s.text()), REFUSED),
    "binary garbage": ("_site.po", lambda s: s.target.write_bytes(b"\x7fELF\x02\x01\x01\x00" + s.token.encode() + bytes(range(256))), REFUSED),
    "50 MB": ("_site.po", _big, REFUSED),
    "directory": ("_site.po", _directory, REFUSED),
    "named pipe": ("_site.po", _fifo, REFUSED),
    "chmod 000": ("_site.po", _unreadable, REFUSED),
    "link to a file outside": ("_site.po", _link(Scene.secret_catalog), REFUSED),
    "link to a file inside i18n": ("_site.po", _link(_link_inside), REFUSED),
    "link loop": ("_site.po", _link(_loop), REFUSED),
    "dangling link": ("_site.po", _link(lambda s: s.outside / "created-by-update.po"), REFUSED),
    "page catalog's folder is a link": ("guide/concepts.po", lambda s: _folder_link(s), REFUSED),
    "language folder is a link": ("_site.po", _language_link, REFUSED),
    "folder link loop": ("_site.po", lambda s: _with_link(s, s.target.with_name("loop"), Path(".")), STRAY),
    "a name that moves the cursor": ("_site.po", _strange_name, STRAY),
}


@dataclass
class Run:
    status: int | None
    output: str


def _run(args: list[str], cwd: Path, wrap: list[str], timeout: float = 300) -> Run:
    proc = subprocess.run([*wrap, *args], cwd=cwd, capture_output=True, text=True, env=MKDOCS_ENV, timeout=timeout,
                          errors="replace")
    return Run(proc.returncode, proc.stdout + proc.stderr)


def _serve(config: Path, cwd: Path, language: str, wrap: list[str]) -> tuple[Run, int | None]:
    """``po-i18n serve --lang <language>``: started, ``/<language>/`` fetched once it answers
    (or the command ended first), stopped with Ctrl-C; returns its run and the page's
    HTTP status (``None``: it never answered)."""
    port = free_port()
    proc = subprocess.Popen([*wrap, *PO_I18N, "--config", str(config), "serve", "--lang", language, "-a", f"127.0.0.1:{port}"],
                            cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
                            env={**MKDOCS_ENV, "SITE_URL": f"http://127.0.0.1:{port}/"}, start_new_session=True)
    status = None
    deadline = time.monotonic() + 120
    try:
        while status is None and proc.poll() is None and time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/{language}/", timeout=5) as response:
                    status = response.status
            except urllib.error.HTTPError as exc:
                status = exc.code
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.3)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        try:
            output, _ = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            output, _ = proc.communicate()
    return Run(proc.returncode, output), status


def _snapshot(folder: Path, skip: str | None = None) -> dict[str, bytes | str]:
    """Every file and link under ``folder`` (a link as its target, not followed; a named
    pipe or an unreadable file by kind), but the top-level folder ``skip``."""
    out: dict[str, bytes | str] = {}
    for top, folders, files in os.walk(folder):
        if skip is not None and Path(top) == folder and skip in folders:
            folders.remove(skip)
        for name in files + [f for f in folders if Path(top, f).is_symlink()]:
            path = Path(top, name)
            key = path.relative_to(folder).as_posix()
            if path.is_symlink():
                out[key] = "-> " + os.readlink(path)
            elif path.is_file():
                try:
                    out[key] = path.read_bytes()
                except OSError:
                    out[key] = "unreadable"
            else:
                out[key] = "special"
    return out


SERVE_SITE = os.path.join(tempfile.gettempdir(), "mkdocs_")  # where mkdocs serve builds, as it says
_PATH = re.compile(r"(?<![\w.:/~-])/(?:[\w.+@~-]+/)*[\w.+@~-]+")


def _assert_clean(run: Run, scene: Scene, what: str) -> None:
    assert not TRACEBACK.search(run.output), f"{what}: a traceback\n{run.output[-4000:]}"
    assert "\x1b" not in run.output, f"{what}: printed a terminal escape\n{run.output[-4000:]}"
    assert scene.token not in run.output, f"{what}: printed what the damaged file holds\n{run.output[-4000:]}"
    assert str(scene.outside) not in run.output, f"{what}: named a path outside the project\n{run.output[-4000:]}"
    outside = [p for p in _PATH.findall(run.output) if not p.startswith((str(scene.root), SERVE_SITE, "/fr/", "/ru/"))]
    assert not outside, f"{what}: absolute paths outside the project {outside}\n{run.output[-4000:]}"


def _assert_one_error(run: Run) -> None:
    """The build stopped with one line naming a file under ``i18n/``."""
    errors = [line for line in run.output.splitlines() if line.startswith("ERROR")]
    assert run.status not in (0, None) and len(errors) == 1, run.output[-3000:]
    assert re.match(r"ERROR +- +i18n/.+?: ", errors[0]), run.output[-3000:]


@contextlib.contextmanager
def _scene(kind: str, catalog: str, plant: Callable[[Scene], None], token: str) -> Iterator[tuple[Scene, Path]]:
    """A fresh copy of the site (``fixture`` or ``course``) with one catalog damaged;
    yields the scene and its mkdocs.yml."""
    base = Path(tempfile.mkdtemp(prefix="damaged-"))
    try:
        if kind == "fixture":
            root = base / "example"  # the plugin's example site needs nothing beside it
            shutil.copytree(FIXTURE, root, ignore=shutil.ignore_patterns("__pycache__", "site", ".cache"))
            share_verdicts(root)
            language = "fr"
        else:
            (base / "course").mkdir()
            root = copy_project(base / "course")
            language = "ru"
        outside = base / "outside"
        outside.mkdir()
        scene = Scene(root, root / "i18n" / language / catalog, outside, token)
        plant(scene)
        yield scene, root / "mkdocs.yml"
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _wrap(name: str) -> list[str]:
    """What the commands of a case run under: chmod 000 stops no read by root, whose
    CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH pass over permissions, so as root that case
    runs its commands without them (``setpriv``, util-linux), still as the owner of the
    copy."""
    if name != "chmod 000" or os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None or subprocess.run([setpriv, "--bounding-set", "-dac_override,-dac_read_search", "true"]).returncode:
        pytest.skip("Requires: [not root, or setpriv that may drop CAP_DAC_OVERRIDE] (as root, chmod 000 stops no read)")
    return [setpriv, "--bounding-set", "-dac_override,-dac_read_search"]


def _check_case(kind: str, name: str, catalog: str, plant: Callable[[Scene], None], damage: str, language: str) -> None:
    token = f"SECRET{zlib.crc32(name.encode()):08x}"  # short: an old message quoted the first 30 characters
    wrap = _wrap(name)
    with _scene(kind, catalog, plant, token) as (scene, config):
        outside_before = _snapshot(scene.outside)
        cwd = scene.root

        check = _run([*PO_I18N, "--config", str(config), "check"], cwd, wrap)
        _assert_clean(check, scene, "po-i18n check")
        assert check.status not in (0, None), f"po-i18n check found nothing\n{check.output}"

        before = _snapshot(scene.root, skip="i18n")
        update = _run([*PO_I18N, "--config", str(config), "update"], cwd, wrap)
        _assert_clean(update, scene, "po-i18n update")
        assert _snapshot(scene.root, skip="i18n") == before, "po-i18n update wrote outside i18n/"
        assert _snapshot(scene.outside) == outside_before, "po-i18n update wrote outside the project"
        if damage == REFUSED:  # refused with one line, after the catalogs it could update
            said = [l for l in update.output.splitlines() if not l.startswith("updated ")]
            assert update.status == 2 and len(said) == 1 and said[0].startswith("i18n/"), update.output
        else:
            assert update.status in (0, 2), update.output
        if update.status == 0:  # it repaired the header; put the damage back for the build
            shutil.rmtree(scene.root / "i18n")
            shutil.copytree((FIXTURE if kind == "fixture" else ROOT) / "i18n", scene.root / "i18n")
            plant(scene)

        build = _run([*MKDOCS, "build", "--strict", "-f", str(config)], cwd, wrap)
        _assert_clean(build, scene, "mkdocs build --strict")
        assert build.status != 0, f"the strict build passed\n{build.output[-3000:]}"
        if damage in (REFUSED, STRAY):  # stopped at once, with the one line
            _assert_one_error(build)

        served, status = _serve(config, cwd, language, wrap)
        _assert_clean(served, scene, "po-i18n serve")
        if damage in (REFUSED, STRAY):  # its first build stops as the strict one does: nothing is served
            assert status is None, served.output[-3000:]
            _assert_one_error(served)
        else:  # a bad header or entry: the preview still shows the page (in English where it must)
            assert status == 200, served.output[-3000:]
        assert _snapshot(scene.outside) == outside_before, "a command wrote outside the project"


@pytest.mark.parametrize("name", list(CASES))
def test_a_damaged_catalog_is_one_line_in_every_command(name):
    catalog, plant, damage = CASES[name]
    _check_case("fixture", name, catalog, plant, damage, "fr")


COURSE_CASES: dict[str, tuple[str, Callable[[Scene], None], str]] = {
    # the badges say "2 processes", "1 node" (the course's own strings): the plural rule is
    # evaluated in the build; the engine's own strings have no plural, so the example has none
    "division by zero at n=2": ("_course.po", _plural("nplurals=3; plural=n%(n-2) ? 1 : 2;"), HEADER),
    "plural out of range": ("_course.po", _plural("nplurals=3; plural=n;"), HEADER),
    "no charset": ("_course.po", lambda s: s.header("Content-Type:", '"Content-Type: text/plain\\n"\n'), HEADER),
    "msgstr[5] beyond nplurals": ("_course.po", _msgstr_beyond, ENTRY),
    "page catalog links outside": ("ddp-basics.po", _link(Scene.secret_catalog), REFUSED),
    "page catalog is a dangling link": ("ddp-basics.po", _link(lambda s: s.outside / "created-by-update.po"), REFUSED),
}


@pytest.mark.parametrize("name", list(COURSE_CASES))
def test_a_damaged_catalog_of_the_course_is_one_line_in_every_command(name):
    catalog, plant, damage = COURSE_CASES[name]
    _check_case("course", name, catalog, plant, damage, "ru")
