"""Segment an English Markdown page into translatable messages, with their source spans.

The page is parsed by markdown-it-py (a CommonMark parser whose tokens carry source
line ranges in ``token.map``). Each translatable block (a heading's text, a paragraph,
a table cell, a block or admonition title) becomes one :class:`Segment` that knows the
exact character span it came from, so a translation can be spliced back into the
original bytes while every other byte of the page stays untouched. The page is never
re-serialized.

MkDocs extension syntax that CommonMark does not know is prepared before parsing, on a
*view* of the page that has the same number of lines:

* front matter, ``--8<--`` include lines and pymdownx blocks fences (``/// note | T``,
  ``///``) with their indented option lines are blanked, so they split paragraphs as
  the extensions do and are never translated (titles after ``|`` become messages);
* old-style indented containers (``!!! note "T"``, ``??? tip``, ``=== "Tab"``) are
  blanked and their 4-space-indented body is dedented, so the body is parsed as
  ordinary Markdown instead of an indented code block.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from markdown_it import MarkdownIt

__all__ = ["Segment", "count_words", "segment", "normalize_inline"]

_PARSER = MarkdownIt("commonmark").enable("table")

# pymdownx.blocks: "/// name | title" opens, a line of only slashes closes.
_BLOCK_OPEN = re.compile(r"^(?P<indent>[ ]*)/{3,}[ ]*(?P<name>[\w-]+)[ ]*(?:\|[ ]*(?P<title>.*?))?[ ]*$")
_BLOCK_CLOSE = re.compile(r"^[ ]*/{3,}[ ]*$")
# Old-style containers of admonition, pymdownx.details and pymdownx.tabbed.
_INDENTED_OPEN = re.compile(
    r'^(?P<indent>[ ]*)(?P<marker>!!!|\?\?\?\+?|===\+?)[ ]*(?P<name>[\w-]+(?:[ ]+[\w-]+)*)?'
    r'(?:[ ]*"(?P<title>[^"]*)")?[ ]*$'
)
_INCLUDE = re.compile(r"^[ ]*-{1,}8<-{1,}")
_INCLUDE_BLOCK = ("--8<--", "-8<-", "--8<-", "-8<--")
_TASK_MARKER = re.compile(r"^\[[ xX]\][ \t]+")  # pymdownx.tasklist: a quiz option, "[x]" if right
_FOOTNOTE_DEF = re.compile(r"^\[\^[^\]]+\]:[ \t]+")
_HEADING_ATTRS = re.compile(r"[ \t]*\{[^{}]*\}[ \t]*$")


@dataclass(frozen=True)
class Segment:
    """One translatable message and the span of the page it was cut from.

    Attributes:
        kind: what the message is, for translators (``"heading"``, ``"paragraph"``,
            ``"list item"``, ``"table cell"``, ``"note title"`` …).
        msgid: the message text: inline Markdown with soft line breaks folded to one
            space and hard line breaks kept as ``"\\n"``.
        start: ``(line, column)`` of the first character of the span, 0-based.
        end: ``(line, column)`` one past the last character of the span.
        continuation: the prefix a continuation line needs inside this block's
            containers (spaces under list markers, ``>`` of block quotes).
    """

    kind: str
    msgid: str
    start: tuple[int, int]
    end: tuple[int, int]
    continuation: str = ""


_WORD = re.compile(r"\w+")


def count_words(msgid: str) -> int:
    """Words of a message (runs of Unicode word characters), the unit of every
    "percent translated" figure: the page notice, the status page and ``course stats``."""
    return len(_WORD.findall(msgid))


def normalize_inline(text: str) -> str:
    """Fold a block's inline source into a message: soft breaks become one space.

    Args:
        text: the inline content of one block, lines separated by ``"\\n"``.

    Returns:
        The message text. A hard line break (two trailing spaces, or a trailing
        backslash as CommonMark allows) is kept as ``"\\n"`` (the backslash kept too),
        so reflowing a paragraph never changes its message.
    """
    lines = text.split("\n")
    out: list[str] = []
    for i, line in enumerate(lines):
        last = i == len(lines) - 1
        stripped = line.strip()
        if last:
            out.append(stripped)
        elif line.endswith("  "):
            out.append(stripped + "\n")
        elif stripped.endswith("\\"):
            out.append(stripped + "\n")
        else:
            out.append(stripped + " ")
    return "".join(out).strip(" ")


def _prepare_view(lines: list[str]) -> tuple[list[str], list[Segment]]:
    """Blank the extension syntax CommonMark does not know; return the view and titles."""
    view: list[str] = []
    titles: list[Segment] = []
    fence: str | None = None  # the opening fence while inside fenced code
    containers: list[int] = []  # body indents of open old-style containers
    in_options = False
    n = len(lines)
    i = 0
    if lines and lines[0].rstrip("\r\n") == "---":
        # YAML front matter: everything up to the closing '---' or '...'.
        for j in range(1, n):
            if lines[j].rstrip("\r\n") in ("---", "..."):
                view.extend("\n" for _ in range(j + 1))
                i = j + 1
                break
    while i < n:
        raw = lines[i]
        line = raw.rstrip("\r\n")
        stripped = line.lstrip(" ")
        indent = len(line) - len(stripped)
        # Leave old-style containers whose body this line is outside of.
        if stripped and fence is None:
            while containers and indent < containers[-1]:
                containers.pop()
        body_indent = containers[-1] if containers else 0
        inner = line[body_indent:] if line[:body_indent].strip(" ") == "" else line.lstrip(" ")
        if fence is not None:
            view.append(inner + "\n")
            if inner.lstrip(" ").startswith(fence) and inner.strip(" ").strip(fence[0]) == "":
                fence = None
            i += 1
            continue
        fence_match = re.match(r"^[ ]{0,3}(`{3,}|~{3,})", inner)
        if fence_match:
            fence = fence_match.group(1)
            view.append(inner + "\n")
            i += 1
            continue
        if in_options and stripped and indent >= 4:
            view.append("\n")  # a blocks header's YAML option line
            i += 1
            continue
        in_options = False
        block = _BLOCK_OPEN.match(line)
        if block:
            title = block.group("title")
            if title:
                col = line.index(title, line.index("|"))
                titles.append(Segment(f"{block.group('name')} title", title, (i, col), (i, col + len(title))))
            view.append("\n")
            in_options = True
            i += 1
            continue
        if stripped.rstrip() in _INCLUDE_BLOCK:
            # A multi-line include block: "--8<--", one path per line, "--8<--".
            j = i + 1
            while j < n and lines[j].strip() not in _INCLUDE_BLOCK:
                j += 1
            view.extend("\n" for _ in range(i, min(j + 1, n)))
            i = j + 1
            continue
        if _BLOCK_CLOSE.match(line) or _INCLUDE.match(line):
            view.append("\n")
            i += 1
            continue
        old = _INDENTED_OPEN.match(line)
        if old:
            title = old.group("title")
            if title:
                col = line.index('"' + title + '"', indent) + 1
                name = (old.group("name") or "tab").split()[0]
                if old.group("marker").startswith("="):
                    name = "tab"
                titles.append(Segment(f"{name} title", title, (i, col), (i, col + len(title))))
            containers.append(indent + 4)
            view.append("\n")
            i += 1
            continue
        view.append(inner + "\n")
        i += 1
    return view, titles


def _span(lines: list[str], first: int, last: int, content: str) -> tuple[tuple[int, int], tuple[int, int]]:
    """Locate the inline content of a block within its original source lines."""
    content_lines = content.split("\n")
    head = content_lines[0].strip()
    first_line = lines[first].rstrip("\r\n")
    start_col = first_line.find(head)
    if start_col < 0:  # tabs or escapes the parser rewrote: take the whole line
        start_col = len(first_line) - len(first_line.lstrip(" >-*+0123456789.)\t"))
    tail = content_lines[-1].strip()
    last_line = lines[last].rstrip("\r\n")
    search_from = start_col if last == first else 0
    end_col = last_line.rfind(tail, search_from)
    end_col = len(last_line.rstrip()) if end_col < 0 else end_col + len(tail)
    return (first, start_col), (last, end_col)


def _continuation(prefix: str) -> str:
    """The prefix of a continuation line: block quote markers kept, the rest spaces."""
    return "".join(ch if ch == ">" else " " for ch in prefix)


def segment(markdown: str) -> list[Segment]:
    """Cut an English page into messages, in page order (see :func:`_segment`).

    Results are cached by page text: a build segments each English page once per
    language, and segments are immutable.
    """
    return list(_segment_cached(markdown))


@functools.lru_cache(maxsize=512)
def _segment_cached(markdown: str) -> tuple[Segment, ...]:
    return tuple(_segment(markdown))


def _segment(markdown: str) -> list[Segment]:
    """Cut an English page into messages, in page order.

    Args:
        markdown: the whole page source (str). Line endings are kept as they are.

    Returns:
        The segments in source order. Code (fenced or indented), HTML blocks, include
        lines, link reference definitions and front matter produce no segment: they are
        never messages, so they are copied through byte for byte by the renderer.

    The parser is markdown-it-py with the CommonMark preset plus tables
    (https://markdown-it-py.readthedocs.io/, ``Token.map`` gives 0-based line ranges).
    """
    lines = markdown.splitlines(keepends=True)
    view, segments = _prepare_view(lines)
    tokens = _PARSER.parse("".join(view))
    parents: list[str] = []
    row: tuple[int, int] | None = None  # (line, column cursor) of the table row being read
    for token in tokens:
        if token.nesting == 1:
            parents.append(token.type)
            if token.type == "tr_open" and token.map:
                row = (token.map[0], 0)
            continue
        if token.nesting == -1:
            parents.pop()
            continue
        if token.type != "inline" or not token.map or not token.content.strip():
            continue
        parent = parents[-1] if parents else ""
        first, last = token.map[0], token.map[1] - 1
        if parent in ("th_open", "td_open") and row is not None:
            line_no, cursor = row
            text = lines[line_no].rstrip("\r\n")
            cell = token.content.strip()
            col = text.find(cell, cursor)
            if col < 0:
                continue
            row = (line_no, col + len(cell))
            kind = "table header" if parent == "th_open" else "table cell"
            segments.append(Segment(kind, normalize_inline(cell), (line_no, col), (line_no, col + len(cell))))
            continue
        content = token.content
        if parent == "heading_open":
            last = first  # a setext heading's underline is not part of the text
            content = _HEADING_ATTRS.sub("", content)
            kind = "heading"
        elif len(parents) >= 2 and parents[-2] == "list_item_open":
            kind = "list item"
        elif "blockquote_open" in parents:
            kind = "quote"
        else:
            kind = "paragraph"
        task = _TASK_MARKER.match(content) if kind == "list item" else None
        if task:  # the marker says which option is right: markup, never translated
            content = content[task.end():]
            kind = "quiz option"
        footnote = _FOOTNOTE_DEF.match(content)
        if footnote:  # "[^1]: text": the label is markup, only the text is a message
            content = content[footnote.end():]
            kind = "footnote"
        if not content.strip():
            continue
        start, end = _span(lines, first, last, content)
        prefix = lines[first][: start[1]]
        segments.append(Segment(kind, normalize_inline(content), start, end, _continuation(prefix)))
    segments.sort(key=lambda s: (s.start, s.end))
    return segments
