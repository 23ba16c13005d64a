"""Segment an English Markdown page into translatable messages, with their source spans.

The page is parsed by markdown-it-py (a CommonMark parser whose tokens carry source
line ranges in ``token.map``). Each translatable block (a heading's text, a paragraph,
a table cell, a block or admonition title) becomes one :class:`Segment` that knows the
exact character span it came from, so a translation can be spliced back into the
original bytes while every other byte of the page stays untouched. The page is never
re-serialized.

What is a block, a title, code or prose is what the site's own engine decides
(Python-Markdown with the extensions of mkdocs.yml, :mod:`po_i18n.markdown_engine`),
not what CommonMark decides. So the page is first read line by line with the engine's
rules (:mod:`po_i18n.syntax`: the extensions' own patterns and processors), and
markdown-it-py parses a *view* of the page that has the same number of lines and where
those rules are already applied:

* fenced code (as pymdownx.superfences finds it: closed, at its opening indentation),
  snippet notation (as pymdownx.snippets finds it), front matter, abbreviation
  definitions and pymdownx.blocks headers, options and ends are blanked: never
  messages, and they split paragraphs as the extensions do;
* containers with an indented body (``!!! note "T"``, ``??? tip``, ``=== "Tab"``,
  definitions ``:   text``, footnotes ``[^1]: text``) lose their marker and their body
  is dedented, so it is parsed as ordinary Markdown instead of indented code; titles
  become messages, block *arguments* (``/// html | div``) do not;
* list markers are widened to Python-Markdown's fixed 4-column content indent, and
  fancy markers (``a.``, ``iv.``) read as ``1.``, so that what is a nested paragraph
  and what is indented code agrees with the engine;
* a container that ends on a non-blank line, a definition term and a callout's marker
  line end the message before them, as they end the paragraph in the engine; an
  attribute list on a block's last line (``{ .annotate }``) is markup, not text.

Syntax the site does not enable (``??? tip`` without pymdownx.details) is plain text,
as the engine renders it, and :func:`syntax_warnings` says so.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from markdown_it import MarkdownIt

from . import syntax as sx
from .markdown_engine import DEFAULT_ENGINE, MarkdownEngine

__all__ = ["Segment", "count_words", "segment", "normalize_inline", "syntax_warnings"]

# Block structure only: messages are the inline tokens' source text, so their inline
# syntax is never parsed (markdown-it's core rule "inline" off: a third of the time).
_PARSER = MarkdownIt("commonmark").enable("table").disable(["inline", "text_join"])

_TASK_MARKER = re.compile(r"^\[[ xX]\][ \t]+")  # pymdownx.tasklist: a quiz option, "[x]" if right
# attr_list's HEADER_RE: a heading's own attribute list follows a space; one that touches
# the text before it (":icon:{ .cls }") belongs to that inline element and is text here
_HEADING_ATTRS = re.compile(r"[ \t]+\{[^{}]*\}[ \t]*$")
_LIST_MARKER = re.compile(r"^([ ]*)([-*+]|\d{1,9}\.)([ ]{1,3})(?=\S)")
_QUOTE_PREFIX = re.compile(r"^(?:[ ]{0,3}>)+")
# markdown/blockprocessors.py, BlockQuoteProcessor.RE (one level, one line): what clean() strips
_QUOTE_LEVEL = re.compile(r"[ ]{0,3}>[ ]?")
# the run of a line that tabs may indent: markdown/core.py expands every tab to 4 columns first
_LEAD = re.compile(r"^[ \t>]*")
_CM_FENCE = re.compile(r"^[ ]*(`{3,}|~{3,})")
_PM_ITEM = re.compile(r"^[ ]{0,3}(?:[-*+]|\d+\.)[ ]+\S")
_ATX_NO_SPACE = re.compile(r"^(#{1,6})(?=[^#\s])")
# A tag starting a line's content (after block quote and list markers): CommonMark may
# take it for an HTML block, the engine takes it for inline HTML (see _line).
_LEADING_TAG = re.compile(r"^([ >]*(?:(?:[-*+]|\d{1,9}[.)])[ ]+)*)<(?=[A-Za-z/])")
_HIDE = "\ue000"  # stands in the view for a character markdown-it must not see as syntax
_MARKER_END = re.compile(r"^[ ]*(?:[-*+]|\d{1,9}[.)])")
_PAREN_ITEM = re.compile(r"^[ ]{0,3}\d{1,9}\)[ ]")
# A view line that is neither blank nor opens a block of its own: paragraph text.
_NOT_TEXT = re.compile(r"^[ ]*(?:#|>|\||[-*+][ ]|\d{1,9}[.)][ ])")


@dataclass(frozen=True)
class Segment:
    """One translatable message and the span of the page it was cut from.

    Attributes:
        kind: what the message is, for translators (``"heading"``, ``"paragraph"``,
            ``"list item"``, ``"table cell"``, ``"note title"``, ``"definition term"``,
            ``"abbreviation title"`` …).
        msgid: the message text: inline Markdown with soft line breaks folded to one
            space and hard line breaks kept as ``"\\n"``.
        start: ``(line, column)`` of the first character of the span, 0-based.
        end: ``(line, column)`` one past the last character of the span.
        continuation: the prefix a continuation line needs inside this block's
            containers (spaces under list markers, ``>`` of block quotes).
        template: for a message the page does not write (a container's default title:
            ``!!! note`` shows "Note"), how a translation is written at the empty span,
            ``{}`` standing for the msgstr (``' "{}"'`` after ``!!! note``, ``" | {}"``
            after ``/// note``); ``""`` for a message whose span holds its text.
    """

    kind: str
    msgid: str
    start: tuple[int, int]
    end: tuple[int, int]
    continuation: str = ""
    template: str = ""


_WORD = re.compile(r"\w+")


def count_words(msgid: str) -> int:
    """Words of a message (runs of Unicode word characters), the unit of every
    "percent translated" figure: the page notice, the status page and ``po-i18n stats``."""
    return len(_WORD.findall(msgid))


def normalize_inline(text: str, backslash_breaks: bool = False) -> str:
    """Fold a block's inline source into a message: soft breaks become one space.

    Args:
        text: the inline content of one block, lines separated by ``"\\n"``.
        backslash_breaks: whether a trailing backslash is a hard break too (only with
            pymdownx.escapeall's ``hardbreak``; Python-Markdown alone renders it as a
            backslash and a soft break, ``markdown/inlinepatterns.py`` LINE_BREAK_RE).

    Returns:
        The message text. A hard line break (two trailing spaces) is kept as ``"\\n"``,
        so reflowing a paragraph never changes its message.
    """
    lines = text.split("\n")
    out: list[str] = []
    for i, line in enumerate(lines):
        last = i == len(lines) - 1
        stripped = line.strip()
        if last:
            out.append(stripped)
        elif line.endswith("  ") or (backslash_breaks and stripped.endswith("\\")):
            out.append(stripped + "\n")
        else:
            out.append(stripped + " ")
    return "".join(out).strip(" ")


@dataclass
class _Box:
    """An open container: an indented body (``indent``) or a blocks fence (``slashes``)."""

    body: int
    lazy: bool = False  # the first paragraph may continue on unindented lines (footnotes, definitions)
    slashes: int = 0
    dedent: bool = True  # False for a list item: CommonMark reads its body itself
    footnote: bool = False
    last: int = -1  # the last line with text in it
    quote: int = 0  # the block quote depth it was opened at: ``body`` counts from that quote's content


@dataclass
class _View:
    lines: list[str]
    titles: list[Segment] = field(default_factory=list)
    breaks: set[int] = field(default_factory=set)  # a message never continues onto these lines
    kinds: dict[int, str] = field(default_factory=dict)  # a paragraph starting here is of this kind
    text_of: dict[int, str] = field(default_factory=dict)  # message text of a line the view disguises
    footnote_ends: set[int] = field(default_factory=set)  # last lines of footnotes (their back-link follows)
    disguised: dict[int, str] = field(default_factory=dict)  # line -> the characters _HIDE stands for on it
    shift: dict[int, int] = field(default_factory=dict)  # line -> source column minus the column _line saw
    warnings: list[tuple[int, str]] = field(default_factory=list)


def _title(view: _View, kind: str, line: str, i: int, title: str, search_from: int) -> None:
    col = line.index(title, search_from)
    view.titles.append(Segment(f"{kind} title", title, (i, col), (i, col + len(title))))


def _default_title(view: _View, syn: sx.Syntax, kind: str, i: int, col: int, probe: str, template: str) -> None:
    """A container written without a title shows the engine's default one ("Note"): that
    text is a message of kind ``"default <kind> title"``, at the empty span where an
    explicit title would go (``col`` of line ``i``), written there as ``template``."""
    title = syn.default_title(probe)
    if title is not None:
        view.titles.append(Segment(f"default {kind} title", title, (i, col), (i, col), "", template))


def _prepare_view(lines: list[str], syn: sx.Syntax) -> _View:
    """Apply the engine's block rules to the page; return the view markdown-it parses."""
    n = len(lines)
    raw = [line.rstrip("\r\n") for line in lines]
    out = _View(["\n"] * n)
    skip = [False] * n
    if raw and raw[0] == "---":  # YAML front matter (MkDocs's meta), up to '---' or '...'
        for j in range(1, n):
            if raw[j] in ("---", "..."):
                skip[: j + 1] = [True] * (j + 1)
                break
    body_lines = [r if not s else "" for r, s in zip(raw, skip)]
    for i, notation in enumerate(syn.snippet_notation(body_lines)):
        skip[i] = skip[i] or notation
    for first, last in syn.fenced_lines([r if not s else "" for r, s in zip(raw, skip)]):
        for j in range(first, min(last, n)):
            skip[j] = True
        if last - 1 < n:
            out.breaks.add(last)  # a paragraph never continues past a fence
    # raw HTML as the engine finds it before any block is parsed: its lines are markup
    for j, ranges in syn.html_markup([r if not s else "" for r, s in zip(raw, skip)]).items():
        source = raw[j]
        raw[j] = "".join(ch for k, ch in enumerate(source) if not any(a <= k < b for a, b in ranges))
        if not source[: ranges[0][0]].strip():
            out.breaks.add(j)  # HTML starting a line ends the paragraph before it
        if not source[max(b for _, b in ranges):].strip():
            out.breaks.add(j + 1)  # and HTML ending one, the paragraph after it
    stack: list[_Box] = []
    options = False  # inside a blocks header's indented YAML options
    prev_blank = True
    # Python-Markdown's blocks are the runs between blank lines, and a list starts only a
    # block (UListProcessor.test matches the block's start): in a block that began with
    # paragraph text ("text"), a list marker is more text, where CommonMark starts a list
    chunk: str | None = None
    para: list[int] = []  # view lines of the plain paragraph being read at this level
    last_para: list[int] = []
    chunk_depth = 0  # the quote depth the chunk is read at
    depth_before = 0  # quote depth of the line before (a lazy line stays in its quotes)
    raw_blank = True  # the line before is blank in the source (not only inside a quote)
    i = 0
    while i < n:
        source_line = raw[i]
        if not source_line.strip(" \t"):
            depth_before, raw_blank = 0, True
        if skip[i]:
            quote = _QUOTE_PREFIX.match(source_line)
            if quote:  # keep a block quote open across the code it holds
                out.lines[i] = quote.group(0).replace(" ", "") + "\n"
            line, depth, _, _, _, cut, _ = _unquote(source_line, stack)
            stripped = line.lstrip(" ")
            if stripped and not prev_blank and i > 0 and not skip[i - 1]:
                out.breaks.add(i)
            # a fence or notation line at a shallower indent closes the containers it is outside of
            indent = len(line) - len(stripped)
            if source_line.strip(" \t"):
                _close_outside(out, stack, cut, depth)
                depth_before, raw_blank = depth, False
            while (stripped and stack and stack[-1].slashes == 0 and stack[-1].quote == depth
                   and indent < stack[-1].body):
                _close(out, stack.pop())
            if para:
                last_para, para = para, []
            prev_blank = not stripped
            chunk = None
            i += 1
            continue
        if raw_blank and not source_line.strip(" \t"):
            line, depth, pos, tabs, prefix, cut, starts = source_line, 0, 0, 0, "", None, []
        else:
            line, depth, pos, tabs, prefix, cut, starts = _unquote(source_line, stack)
        stripped = line.lstrip(" ")
        indent = len(line) - len(stripped)
        if (stripped and depth < depth_before and not raw_blank and cut is None
                and all(b.slashes or b.body <= indent for b in stack if b.quote == depth)):
            prefix += "> " * (depth_before - depth)  # a lazy line: the rest of the block stays quoted
            depth, starts = depth_before, []
        popped = _close_outside(out, stack, cut, depth)
        callout = None
        if starts and syn.callouts and (depth_before < depth or not out.lines[i - 1].strip(" >\n")):
            callout = sx.CALLOUT.match(_expand(source_line)[0], starts[-1])
        if source_line.strip(" \t"):
            depth_before, raw_blank = depth, False
        if callout:  # pymdownx.quotes: the quote's first line is the callout's type and title
            _callout(out, syn, i, _expand(source_line)[0], callout, tabs)
            stripped = ""
        if not stripped:
            if depth:
                out.lines[i] = prefix.rstrip() + "\n"  # a blank line inside the quotes
            for box in stack:
                box.lazy = False
            options = False
            if para:
                last_para, para = para, []
            prev_blank = True
            chunk = None
            i += 1
            continue
        if options and indent >= (stack[-1].body if stack and stack[-1].quote == depth else 0) + 4:
            i += 1  # a blocks header's YAML option line
            continue
        options = False
        text_item = chunk == "text" and not prev_blank and bool(_PM_ITEM.match(stripped) or _PAREN_ITEM.match(stripped))
        while stack and stack[-1].slashes == 0 and stack[-1].quote == depth and indent < stack[-1].body:
            box = stack[-1]
            if box.lazy and not prev_blank and not _starts_container(stripped, syn):
                break  # lazy continuation of a footnote's or definition's first paragraph
            if text_item and not any(b.dedent or b.slashes for b in stack):
                break  # a page-level list item's paragraph goes on over an unindented marker (looseDetab)
            _close(out, stack.pop())
            popped = True
        if popped:
            text_item = False  # a marker that closes a container starts a list of its own
            out.breaks.add(i)
            if para:
                last_para, para = para, []
        body = next((b.body for b in reversed(stack) if b.slashes == 0 and b.quote == depth), 0)
        col = body if line[:body].strip(" ") == "" else indent
        shown = next((b.body for b in reversed(stack) if b.slashes == 0 and b.dedent and b.quote == depth), 0)
        opened = len(stack)
        options = _line(out, syn, stack, raw, i, line, col, para, last_para, min(shown, col), text_item)
        for box in stack[opened:]:
            box.quote = depth
        out.shift[i] = pos - tabs
        if depth:
            out.lines[i] = prefix + out.lines[i] if out.lines[i].strip() else prefix.rstrip() + "\n"
        for box in stack:
            box.last = i
        view = out.lines[i][len(prefix):] if depth else out.lines[i]  # the content inside the quotes
        if depth != chunk_depth:
            chunk = None  # a quote's content is parsed as a chunk of its own (BlockQuoteProcessor.run)
        chunk_depth = depth
        if not view.strip():
            chunk = None
        elif chunk is None or i in out.breaks:
            chunk = "other" if _NOT_TEXT.match(view) else "text"
        elif view.lstrip(" ").startswith("#"):
            chunk = None  # a heading splits a block: what follows starts a new one
        if view.strip() and i not in out.breaks:
            para.append(i)
        elif view.strip():
            if para:
                last_para = para
            para = [i]
        else:
            if para:
                last_para, para = para, []
        prev_blank = False
        i += 1
    for box in stack:
        _close(out, box)
    out.titles = [Segment(t.kind, t.msgid, (t.start[0], t.start[1] + out.shift.get(t.start[0], 0)),
                          (t.end[0], t.end[1] + out.shift.get(t.end[0], 0)), t.continuation, t.template)
                  for t in out.titles]
    return out


def _expand(line: str) -> tuple[str, int]:
    """The line as the engine reads it, and how many columns longer that is: tabs in its
    leading run of spaces, tabs and ``>`` expanded to 4-column stops (``markdown/core.py``
    expands every tab, ``source.expandtabs(tab_length)``); tabs inside text are text."""
    lead = _LEAD.match(line).group(0)
    expanded = lead.expandtabs(4) + line[len(lead):]
    return expanded, len(expanded) - len(line)


def _unquote(line: str, stack: list[_Box]) -> tuple[str, int, int, int, str, int | None, list[int]]:
    """Read a line's block quote markers as Python-Markdown does: one level is
    ``[ ]{0,3}>[ ]?`` at the body column of the innermost container it is in
    (``BlockQuoteProcessor.clean``, applied again inside each container and quote).

    Args:
        line: the source line, without its ending.
        stack: the open containers, outermost first; each counts its body column from
            the content of the quote it was opened in (``_Box.quote``).

    Returns:
        ``(text, depth, pos, tabs, prefix, cut, starts)``: the content inside the quotes
        (tabs expanded), the number of quote levels, the column of that content in the
        expanded line, the columns tabs added, what the view writes for the markers
        (``"> "`` a level, with the indentation list items keep), the index of the first
        container the line is outside of (``None``: none) and the column of each level's
        marker in the expanded line.
    """
    expanded, tabs = _expand(line)
    depth = pos = k = 0
    prefix, cut, starts = "", None, []
    while True:
        text = expanded[pos:]
        indent = len(text) - len(text.lstrip(" "))
        base = shown = 0
        while k < len(stack) and stack[k].quote == depth:
            if stack[k].slashes == 0:
                if stack[k].body > indent:
                    break
                base = stack[k].body
                if stack[k].dedent:
                    shown = base
            k += 1
        m = _QUOTE_LEVEL.match(text, base) if text[base:base + 4].lstrip(" ").startswith(">") else None
        if m is None:
            return text, depth, pos, tabs, prefix, cut, starts
        if cut is None and k < len(stack) and stack[k].quote == depth:
            cut = k  # a quote marker outside these containers ends them
        starts.append(pos + m.start())
        prefix += text[shown:base] + "> "
        pos += m.end()
        depth += 1


def _close_outside(out: _View, stack: list[_Box], cut: int | None, depth: int) -> bool:
    """Close the containers a line is outside of: from ``cut`` on, and those opened in
    a quote deeper than the line's; returns whether any closed."""
    popped = False
    while stack and ((cut is not None and len(stack) > cut) or stack[-1].quote > depth):
        _close(out, stack.pop())
        popped = True
    return popped


def _callout(out: _View, syn: sx.Syntax, i: int, expanded: str, m: re.Match, tabs: int) -> None:
    """A callout's first line (``> [!note] Title``, pymdownx.quotes ``RE_CALLOUT``
    matched at its quote marker): its title, or its default title, is a message."""
    title = m.group(3).strip()
    kind = m.group(1).split("|")[0].strip().lower()
    if title:
        _title(out, kind, expanded, i, title, m.start(3))
    else:
        head = m.end(2) if m.group(2) else m.end(1) + 1
        _default_title(out, syn, kind, i, head, expanded[m.start():head] + "\n> x\n", " {}")
    out.shift[i] = -tabs
    out.breaks.add(i + 1)


def _close(out: _View, box: _Box) -> None:
    if box.footnote:  # the back-link is appended to its last paragraph, after any attribute list
        out.footnote_ends.add(box.last)


def _starts_container(text: str, syn: sx.Syntax) -> bool:
    """Whether an unindented line opens something of its own (and so is not lazy)."""
    return bool((syn.footnotes and sx.FOOTNOTE_DEF.match(text)) or (syn.def_list and sx.DEF_MARKER.match(text))
                or sx.BLOCK_START.match(text) or text.startswith(("!!!", "???", "===", "#")) or _PM_ITEM.match(text)
                or (syn.olist is not None and syn.olist.match(text)))


def _line(out: _View, syn: sx.Syntax, stack: list[_Box], raw: list[str], i: int, line: str, col: int,
          para: list[int], last_para: list[int], shown: int | None = None, text_item: bool = False) -> bool:
    """Write view line ``i`` for the text of ``line`` from column ``col`` (the view keeps
    it from column ``shown``: list items keep their indent); returns whether the next
    indented lines are a blocks header's options. ``text_item``: a list marker on this
    line is paragraph text for the engine."""
    shown = col if shown is None else shown
    text = line[col:]
    block = sx.BLOCK_START.match(text)
    if block and block.group(2).lower() not in syn.blocks and not any(b.slashes for b in stack):
        out.warnings.append((i, f"'/// {block.group(2)}' is no pymdownx.blocks block that mkdocs.yml enables: it renders "
                                f"as text; add the extension that defines it to markdown_extensions"))
    if block and block.group(2).lower() in syn.blocks:
        name, arg = block.group(2).lower(), block.group(3)
        if arg and syn.blocks[name]:
            _title(out, name, line, i, arg, line.index("|", col) + 1)
        elif block.group(3) is None and syn.blocks[name]:  # "/// note |" is explicitly untitled
            options = []
            for option in raw[i + 1:]:
                if not option.strip() or len(option) - len(option.lstrip(" ")) < col + 4:
                    break
                options.append(option[col:] + "\n")
            probe = text.rstrip() + "\n" + "".join(options) + "\nx\n" + block.group(1) + "\n"
            _default_title(out, syn, name, i, col + block.end(2), probe, " | {}")
        stack.append(_Box(body=col, slashes=len(block.group(1))))
        return True
    end = sx.BLOCK_END.match(text)
    if end and any(b.slashes == len(end.group(1)) for b in stack):
        while stack and stack[-1].slashes != len(end.group(1)):
            _close(out, stack.pop())
        _close(out, stack.pop())
        out.breaks.add(i + 1)
        return False
    for marker, enabled, pattern in (("!!!", syn.admonition, sx.ADMONITION), ("???", syn.details, sx.DETAILS),
                                     ("===", syn.tabbed, sx.TABBED)):
        if not text.startswith(marker):
            continue
        m = pattern.match(text) if enabled else None
        if m is None:
            if not enabled and re.match(r"^(!!!|\?\?\?)\+? ?[\w-]|^===[+!]* +\"", text):
                ext = {"!!!": "admonition", "???": "pymdownx.details", "===": "pymdownx.tabbed"}[marker]
                out.warnings.append((i, f"'{text.split()[0]}' is {ext} syntax, which mkdocs.yml does not enable: it "
                                        f"renders as text; add {ext} to markdown_extensions or use pymdownx.blocks"))
            break
        if marker == "!!!":
            title, kind, types_end = m.group(2), m.group(1).split()[0], m.end(1)
        elif marker == "???":
            title, kind, types_end = m.group(3), (m.group(2) or m.group(4) or "details").split()[0], m.end(4)
        else:
            title, kind, types_end = m.group(2), "tab", -1
        if title:
            _title(out, kind, line, i, title, line.index('"', col) + 1)
        elif title is None and types_end >= 0:  # '!!! note ""' is explicitly untitled
            _default_title(out, syn, kind, i, col + types_end, text[:types_end] + "\n    x\n", ' "{}"')
        stack.append(_Box(body=col + 4))
        out.breaks.add(i + 1)
        return False
    if syn.def_list:
        m = sx.DEF_MARKER.match(text)
        if m and (para or last_para):
            terms = para or (last_para if last_para and last_para[-1] < i else [])
            for j in terms:
                out.kinds[j] = "definition term"
                out.breaks.add(j)
            out.breaks.add(i)
            stack.append(_Box(body=col + 4, lazy=True))
            start = col + m.start(1)
            if m.group(1):
                return _line(out, syn, stack, raw, i, line, start, [], [], start)
            return False
    if syn.footnotes:
        m = sx.FOOTNOTE_DEF.match(text)
        if m:
            stack.append(_Box(body=col + 4, lazy=True, footnote=True))
            out.breaks.add(i)
            out.kinds[i] = "footnote"
            if m.group(2):
                out.lines[i] = m.group(2) + "\n"
            return False
    if syn.abbr:
        m = sx.ABBR_DEF.match(text)
        if m:
            if m.group("title").strip():
                title = m.group("title").strip()
                col_t = line.index(title, col + m.start("title"))
                # the title attribute of every <abbr>: plain text, never wrapped in a span
                out.titles.append(Segment("abbreviation title", title, (i, col_t), (i, col_t + len(title))))
            out.breaks.add(i + 1)
            return False
    item = (syn.olist.match(text) if syn.olist is not None else None) or _PM_ITEM.match(text)
    if text_item or (syn.olist is None and _PAREN_ITEM.match(text)):
        # text for the engine (a marker continuing a paragraph, or "1)" without fancylists)
        marker = _MARKER_END.match(text)
        text = text[: marker.end() - 1] + _HIDE + text[marker.end():]
        out.disguised[i] = out.disguised.get(i, "") + marker.group()[-1]
        item = None
    elif item:  # a list item: its body is indented 4 columns (Python-Markdown's tab_length)
        stack.append(_Box(body=col + (len(text) - len(text.lstrip(" "))) + 4, lazy=True, dedent=False))
    if syn.olist is not None and item:
        m = syn.olist.match(text)
        if m and not re.match(r"^[ ]{0,3}\d+\.", text):
            lead = len(text) - len(text.lstrip(" "))
            text = " " * lead + "1." + " " * max(1, min(3, m.start(1) - lead - 2)) + m.group(1)
    text = _LIST_MARKER.sub(lambda m: m.group(1) + m.group(2) + " " * max(len(m.group(3)), 4 - len(m.group(2))), text)
    text = _ATX_NO_SPACE.sub(r"\1 ", text)
    tag = _LEADING_TAG.match(text)
    if tag:  # raw HTML the engine takes as a block is gone by now: this is inline HTML in prose
        text = text[: tag.end(1)] + _HIDE + text[tag.end(1) + 1:]
        out.disguised[i] = out.disguised.get(i, "") + "<"
    fence = _CM_FENCE.match(text)
    if fence:  # a fence the engine does not take as one (unclosed, or leaving its indent): text
        out.text_of[i] = text.strip()
        text = text[: fence.start(1)] + "x" * len(fence.group(1)) + text[fence.end(1):]
    out.lines[i] = line[shown:col] + text + "\n"
    return False


def syntax_warnings(markdown: str, engine: MarkdownEngine | None = None) -> list[tuple[int, str]]:
    """Container syntax on a page that the site's engine does not enable, so that it
    renders as literal text (``??? tip`` without pymdownx.details).

    Args:
        markdown: the page source.
        engine: the site's engine (default: :data:`po_i18n.markdown_engine.DEFAULT_ENGINE`).

    Returns:
        ``(line, message)`` pairs, the line 1-based.
    """
    view = _view_cached(markdown, engine or DEFAULT_ENGINE)
    return [(line + 1, message) for line, message in view.warnings]


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
    """The prefix of a continuation line: block quote markers and tabs kept, the rest spaces."""
    return "".join(ch if ch in ">\t" else " " for ch in prefix)


def segment(markdown: str, engine: MarkdownEngine | None = None) -> list[Segment]:
    """Cut an English page into messages, in page order.

    Args:
        markdown: the whole page source (str). Line endings are kept as they are.
        engine: the site's Markdown engine, which decides what is a block, a title, code
            or prose (default: :data:`po_i18n.markdown_engine.DEFAULT_ENGINE`, the
            extensions Material documents; a site passes ``engine_for(mkdocs_yml)``).

    Returns:
        The segments in source order. Code (fenced or indented), HTML blocks, snippet
        notation, link reference definitions, front matter, block arguments and
        attribute lists produce no segment: they are never messages, so they are
        copied through byte for byte by the renderer.

    Results are cached by page text and engine: a build segments each English page once
    per language, and segments are immutable. The parser is markdown-it-py with the
    CommonMark preset plus tables (https://markdown-it-py.readthedocs.io/,
    ``Token.map`` gives 0-based line ranges), run on the view of :func:`_prepare_view`.
    """
    return list(_segment_cached(markdown, engine or DEFAULT_ENGINE))


@functools.lru_cache(maxsize=512)
def _view_cached(markdown: str, engine: MarkdownEngine) -> _View:
    return _prepare_view(markdown.splitlines(keepends=True), sx.syntax_of(engine))


@functools.lru_cache(maxsize=512)
def _segment_cached(markdown: str, engine: MarkdownEngine) -> tuple[Segment, ...]:
    return tuple(_segment(markdown, engine))


def _segment(markdown: str, engine: MarkdownEngine) -> list[Segment]:
    syn = sx.syntax_of(engine)
    lines = markdown.splitlines(keepends=True)
    view = _view_cached(markdown, engine)
    segments = list(view.titles)
    tokens = _PARSER.parse("".join(view.lines))
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
        if parent in ("th_open", "td_open") and row is not None:
            line_no, cursor = row
            text = lines[line_no].rstrip("\r\n")
            cell = token.content.strip()
            col = text.find(cell, cursor)
            if col < 0:
                continue
            row = (line_no, col + len(cell))
            kind = "table header" if parent == "th_open" else "table cell"
            segments.append(Segment(kind, normalize_inline(cell, syn.backslash_breaks), (line_no, col), (line_no, col + len(cell))))
            continue
        if parent == "heading_open":
            kind = "heading"
        elif len(parents) >= 2 and parents[-2] == "list_item_open":
            kind = "list item"
        elif "blockquote_open" in parents:
            kind = "quote"
        else:
            kind = "paragraph"
        first = token.map[0]
        content_lines = token.content.split("\n")
        numbered = [(n, _restore(view.text_of.get(n, text), view.disguised.get(n, "")))
                    for n, text in enumerate(content_lines, first)]
        if kind == "heading":
            numbered = numbered[:1] if len(numbered) == 1 else numbered
            numbered[-1] = (numbered[-1][0], _HEADING_ATTRS.sub("", numbered[-1][1]))
        elif (syn.attr_list and len(numbered) > 1 and sx.ATTR_LINE.match(numbered[-1][1])
              and numbered[-1][0] not in view.footnote_ends):
            numbered.pop()  # "{ .annotate }" on the block's last line: its attributes
        for piece in _pieces(numbered, view.breaks):
            piece_kind = kind
            if kind == "paragraph" or kind == "list item":
                piece_kind = view.kinds.get(piece[0][0], kind) if kind == "paragraph" else kind
            elif kind == "quote" and piece[0][0] in view.kinds:
                piece_kind = view.kinds[piece[0][0]]
            seg = _piece_segment(lines, piece, piece_kind, syn)
            if seg is not None:
                segments.append(seg)
    segments.sort(key=lambda s: (s.start, s.end))
    return segments


def _restore(text: str, hidden: str) -> str:
    """The line's own characters back where the view hid them (in order)."""
    for ch in hidden:
        text = text.replace(_HIDE, ch, 1)
    return text


def _pieces(numbered: list[tuple[int, str]], breaks: set[int]) -> list[list[tuple[int, str]]]:
    """Split a block's lines where the engine ends a paragraph that CommonMark continues."""
    out: list[list[tuple[int, str]]] = []
    for number, text in numbered:
        if not out or number in breaks:
            out.append([])
        out[-1].append((number, text))
    return out


def _piece_segment(lines: list[str], piece: list[tuple[int, str]], kind: str, syn: sx.Syntax) -> Segment | None:
    content = "\n".join(text for _, text in piece)
    if kind == "list item":
        task = _TASK_MARKER.match(content)
        if task:  # the marker says which option is right: markup, never translated
            content = content[task.end():]
            kind = "quiz option"
    if not content.strip():
        return None
    first, last = piece[0][0], piece[-1][0]
    start, end = _span(lines, first, last, content)
    prefix = lines[first][: start[1]]
    return Segment(kind, normalize_inline(content, syn.backslash_breaks), start, end, _continuation(prefix))
