"""The page of each whole program: its full source, its command, its badge and a download
of its files byte for byte as verified.

Pure apart from reading ``snippets/``: the MkDocs hook ``hooks/program_pages.py`` adds
the pages and files these functions describe to every language's build, and
``hooks/verification_gate.py`` links each code block's title to its program's page
(:func:`link_titles`).

Where things go (paths under the site, the same in every language but the page's
language prefix)::

    programs/ddp_basics/train/            the page (src ``programs/ddp_basics/train.md``)
    programs/ddp_basics/train.py          the file, byte for byte
    programs/torchrun_launching/slurm_train.zip   a program of several files, all of them
"""
from __future__ import annotations

import html
import io
import posixpath
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path

from po_i18n.interface import Interface, UIString

from .course_strings import (PROGRAM_DIGEST, PROGRAM_DOWNLOAD, PROGRAM_DOWNLOAD_ALL, PROGRAM_INTRO, PROGRAM_MARKERS,
                             PROGRAM_RUN, PROGRAM_RUN_TEXT, PROGRAM_SOURCE)
from .gate import _escape
from .verification import cached_program_files, content_hash

__all__ = ["FOLDER", "Program", "bundle", "link_titles", "page_markdown", "page_uri", "program"]

FOLDER = "programs"  # the site folder of the program pages and their files
_LEXER = {".py": "py", ".sbatch": "bash", ".sh": "bash"}  # pymdownx.highlight's names
_SLOT = "\x00"  # where a link goes into a translated sentence, before escaping


@dataclass(frozen=True)
class Program:
    """One program and the files a reader needs to run it.

    Attributes:
        name: the program's path under ``snippets/`` (``"ddp_basics/train.py"``).
        files: every file of it under ``snippets/``, the program first
            (:func:`coursekit.verification.program_files`: local imports, batch script).
    """

    name: str
    files: tuple[str, ...]

    @property
    def page(self) -> str:
        """The page's source path in the site (``"programs/ddp_basics/train.md"``)."""
        return page_uri(self.name)

    @property
    def downloads(self) -> tuple[str, ...]:
        """Site paths of each file (``"programs/ddp_basics/train.py"``), in ``files`` order."""
        return tuple(f"{FOLDER}/{name}" for name in self.files)

    @property
    def bundle(self) -> str | None:
        """Site path of the zip of all files, for a program of several files; else None."""
        return f"{FOLDER}/{posixpath.splitext(self.name)[0]}.zip" if len(self.files) > 1 else None


def page_uri(name: str) -> str:
    """The source path of program ``name``'s page: ``ddp_basics/train.py`` ->
    ``programs/ddp_basics/train.md``."""
    return f"{FOLDER}/{posixpath.splitext(name)[0]}.md"


def program(name: str, snippets: Path) -> Program:
    """The :class:`Program` of ``snippets/<name>``.

    Raises:
        FileNotFoundError: there is no such file.
    """
    path = snippets / name
    if not path.is_file():
        raise FileNotFoundError(f"snippets/{name}")
    others = [p.relative_to(snippets).as_posix() for p in cached_program_files(path) if p != path]
    return Program(name, (name, *others))


def bundle(prog: Program, snippets: Path) -> bytes:
    """A zip archive of all of ``prog``'s files in one folder named after the program
    (``slurm_train/slurm_train.py``, ``slurm_train/slurm_train.sbatch``), each stored
    byte for byte. The same files give the same bytes: entries in a fixed order with a
    fixed time (1980-01-01, the format's earliest) and mode, so a build is reproducible.
    """
    folder = posixpath.splitext(posixpath.basename(prog.name))[0]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name in prog.files:
            info = zipfile.ZipInfo(f"{folder}/{posixpath.basename(name)}", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, (snippets / name).read_bytes())
    return buffer.getvalue()


def _sentence(ui: Interface, s: UIString, count: int | None = None, **links: str) -> str:
    """A translated sentence as Markdown: the translation escaped (translations are
    untrusted, :func:`coursekit.gate._escape`), then each placeholder replaced by its
    Markdown (a link made here, never from a translation)."""
    slots = {key: f"{_SLOT}{key}{_SLOT}" for key in links}
    text = _escape(ui.text(s, count=count, **slots) if count is not None else ui.text(s, **slots))
    for key, markdown in links.items():
        text = text.replace(slots[key], markdown)
    return text.replace(_SLOT, "")


def _relative(target: str, page: str) -> str:
    """A Markdown link from source path ``page`` to source path ``target``."""
    return posixpath.relpath(target, posixpath.dirname(page))


def page_markdown(prog: Program, snippets: Path, ui: Interface, lessons: list[tuple[str, str]]) -> str:
    """The Markdown of a program's page, in ``ui``'s language.

    The page includes the program's ``launch`` section and each whole file through
    pymdownx.snippets, so what it shows is what ``snippets/`` holds; the verification gate
    then puts the badge (and the verified output) under those blocks as on any page.

    Args:
        prog: the program.
        snippets: the ``snippets/`` folder (for the SHA-256 of each file).
        ui: the course's interface strings in the page's language.
        lessons: ``(source path under docs/, title in the page's language)`` of each page
            showing the program, the one with its command first.

    Returns:
        Markdown text (pymdownx blocks, fenced code, attribute lists).
    """
    page = prog.page
    links = [f"[{_escape(title)}]({_relative(uri, page)})" for uri, title in lessons]
    name = posixpath.basename(prog.name)
    lines = [f"# {_escape(name)}", "", _sentence(ui, PROGRAM_INTRO, count=len(links), lessons=ui.join_list(links)), "",
             f"## {_escape(ui.text(PROGRAM_RUN))}", ""]
    digests = content_hash(snippets / prog.name, snippets)[1]  # each file's SHA-256, as records keep them
    for file, download in zip(prog.files, prog.downloads):
        digest = digests[file]
        base = posixpath.basename(file)
        lines += [f"- [{_sentence(ui, PROGRAM_DOWNLOAD, name=f'`{base}`')}]({_relative(download, page)})"
                  f'{{ download="{base}" .course-download }}',
                  f"  {ui.before(_escape(ui.text(PROGRAM_DIGEST)), f'`{digest}`')}{{ .course-digest }}"]
    if prog.bundle is not None:
        lines += [f"- [{_sentence(ui, PROGRAM_DOWNLOAD_ALL, count=len(prog.files))}]({_relative(prog.bundle, page)})"
                  f'{{ download="{posixpath.basename(prog.bundle)}" .course-download }}']
    lines += ["", _escape(ui.text(PROGRAM_RUN_TEXT)), "", "``` bash", f'--8<-- "{prog.name}:launch"', "```",
              "", f"## {_escape(ui.text(PROGRAM_SOURCE))}", "", _sentence(ui, PROGRAM_MARKERS, marker="`--8<--`"), ""]
    for file in prog.files:
        base = posixpath.basename(file)
        lexer = _LEXER.get(posixpath.splitext(base)[1], "text")
        lines += [f'``` {lexer} title="{base}"', f'--8<-- "{file}"', "```", ""]
    return "\n".join(lines)


_FILENAME = re.compile(r'<span class="filename">(?P<title>[^<]+)</span>')


def link_titles(page_html: str, links: dict[str, str], tooltip: str) -> str:
    """Each code block title (``<span class="filename">train.py</span>``, pymdownx.highlight's
    title) made a link to its program's page.

    Args:
        page_html: the page's HTML.
        links: the URL of the program page, relative to this page, by block title (as
            written in the Markdown, before escaping).
        tooltip: the link's title attribute, in the page's language (escaped here).

    Returns:
        The HTML, with titles not in ``links`` left as they were.
    """
    def link(match: re.Match) -> str:
        url = links.get(html.unescape(match.group("title")))
        if url is None:
            return match.group(0)
        return (f'<span class="filename"><a class="course-program-link" href="{html.escape(url)}" '
                f'title="{html.escape(tooltip)}">{match.group("title")}</a></span>')
    return _FILENAME.sub(link, page_html)
