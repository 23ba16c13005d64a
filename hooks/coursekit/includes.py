"""Broken includes of a page, each in one line: page and line, the include, what is wrong.

pymdownx.snippets with ``check_paths`` stops a build at an include whose file or section
is missing, but with ``Snippet section 'summ' could not be located`` and a traceback,
naming neither the page, its line, nor what the file offers. :func:`broken_includes`
runs the extension's own preprocessor (configured as the site configures it) over a
page's source; where it fails, it finds the first line whose include fails by running it
over ever shorter beginnings of the page (the preprocessor reads a page top to bottom),
and describes that include with the extension's own parsing: its path resolved against
the base paths, the sections the file marks.
"""
from __future__ import annotations

import difflib
import os
from pathlib import Path

import markdown
from mkdocs.utils.meta import get_data
from pymdownx.snippets import SnippetMissingError

__all__ = ["broken_includes", "snippet_preprocessor"]

EXTENSION = "pymdownx.snippets"


def snippet_preprocessor(options: dict):
    """pymdownx.snippets' preprocessor, configured with the site's ``options`` for the
    extension (``mkdocs.yml``'s ``markdown_extensions`` entry), or None when those options
    do not make a missing snippet an error (``check_paths`` off)."""
    if not options.get("check_paths"):
        return None
    md = markdown.Markdown(extensions=[EXTENSION], extension_configs={EXTENSION: options})
    return md.preprocessors["snippet"]


def _fails(preprocessor, lines: list[str]) -> SnippetMissingError | None:
    try:
        preprocessor.run(list(lines))
    except SnippetMissingError as exc:
        return exc
    return None


def _shown(path: str | os.PathLike, root: Path) -> str:
    """A path as the writer sees it: relative to the project root when under it."""
    try:
        return Path(path).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def _include_path(preprocessor, line: str) -> str:
    """The path an include line names, as the extension reads it (quoted inline form, or a
    bare line of a ``--8<--`` block)."""
    m = preprocessor.RE_ALL_SNIPPETS.match(line)
    if m and m.group("inline_marker"):
        return m.group("snippet")[1:-1].strip()
    return preprocessor.RE_SNIPPET.match(line).group("snippet").strip()


def _describe(preprocessor, line: str, error: SnippetMissingError, root: Path) -> str:
    """What is wrong with the include on ``line``, and the remedy."""
    path = _include_path(preprocessor, line)
    shown = f'--8<-- "{path}"'
    target = preprocessor.parse_snippet_target(path)
    if target is None:
        return f"{shown} names no file; write the file's path, relative to the snippets base path"
    found = preprocessor.get_snippet_path(target["path"])
    bases = [(base, is_dir) for base, is_dir in preprocessor.get_bases()]
    if found is None:
        where = ", ".join(f"{_shown(base, root)}{'/' if is_dir else ''}" for base, is_dir in bases) or "(none exists)"
        files = sorted(Path(dirpath, name).relative_to(base).as_posix()
                       for base, is_dir in bases if is_dir for dirpath, _, names in os.walk(base) for name in names)
        near = difflib.get_close_matches(target["path"], files, n=1)
        hint = f" (did you mean {near[0]}?)" if near else ""
        return f"{shown}: there is no file {target['path']} under the snippets base path {where}; fix the path{hint}"
    section = target["section"]
    if section is not None:
        marks = [preprocessor.match_section(text) for text in preprocessor.read_lines(found)]
        names = list(dict.fromkeys(m.group("name") for m in marks
                                   if m is not None and not m.group("escape") and m.group("type") == "start"))
        if section not in names:
            near = difflib.get_close_matches(section, names, n=1)
            hint = f" (did you mean '{near[0]}'?)" if near else ""
            has = f"its sections: {', '.join(names)}" if names else "it marks no section"
            return (f"{shown}: {_shown(found, root)} has no section '{section}' ({has}); name one of them{hint}, "
                    f"or mark the lines in the file with '# --8<-- [start:{section}]' and '# --8<-- [end:{section}]'")
    return f"{shown}: {error}; fix the include or the file it reads"


def broken_includes(page: Path, preprocessor, root: Path) -> list[str]:
    """The first broken include of a page, as pymdownx.snippets would stop the build on it.

    Args:
        page: the page's Markdown file (its front matter is skipped, as MkDocs does).
        preprocessor: from :func:`snippet_preprocessor`.
        root: the project root; paths in the messages are relative to it.

    Returns:
        An empty list, or one line
        ``docs/x.md:75: --8<-- "lesson/program.py:name": <problem>; <remedy>`` for the
        include where the extension stops (a missing file, with the base paths searched;
        a missing section, with the sections the file has; else the extension's message).
    """
    source = Path(page).read_text(encoding="utf-8-sig")
    body, _ = get_data(source)
    offset = source.count("\n") - body.count("\n")  # lines of front matter MkDocs removed
    lines = body.split("\n")
    error = _fails(preprocessor, lines)
    if error is None:
        return []
    if _fails(preprocessor, []) is not None:  # the extension's auto_append, added to every page, fails
        return [f"{_shown(page, root)}: pymdownx.snippets' auto_append: {error}; fix auto_append in mkdocs.yml"]
    good, bad = 0, len(lines)  # the beginning of `good` lines passes, of `bad` lines fails
    while bad - good > 1:
        middle = (good + bad) // 2
        if _fails(preprocessor, lines[:middle]) is None:
            good = middle
        else:
            bad = middle
    first = _fails(preprocessor, lines[:bad]) or error
    return [f"{_shown(page, root)}:{offset + bad}: {_describe(preprocessor, lines[bad - 1], first, root)}"]
