"""Each code block highlighted once per process (po_i18n.highlight_memo): the same output
as Pygments for the same code, lexer and formatter, and a different one whenever any of
their options differs; a site builds to the same bytes with it and without it."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pygments
import pytest
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer, TextLexer, get_lexer_by_name
from pymdownx.highlight import BlockHtmlFormatter

from example_site import EXAMPLE, MKDOCS_ENV
from po_i18n import highlight_memo

CODE = "def f(x):\n    return x + 1\n"


def test_the_same_call_is_answered_once_and_equals_pygments():
    highlight = highlight_memo.memo(pygments.highlight)
    first = highlight(CODE, PythonLexer(), HtmlFormatter(linenos="inline"))
    again = highlight(CODE, PythonLexer(), HtmlFormatter(linenos="inline"))  # new objects, the same options
    assert first == again == pygments.highlight(CODE, PythonLexer(), HtmlFormatter(linenos="inline"))
    assert (highlight.misses, highlight.hits) == (1, 1)


@pytest.mark.parametrize("other", [
    lambda: (CODE + "# more\n", PythonLexer(), HtmlFormatter()),
    lambda: (CODE, TextLexer(), HtmlFormatter()),
    lambda: (CODE, PythonLexer(stripnl=False), HtmlFormatter()),
    lambda: (CODE, PythonLexer(), HtmlFormatter(hl_lines=[2])),
    lambda: (CODE, PythonLexer(), HtmlFormatter(filename="f.py")),
    lambda: (CODE, PythonLexer(), BlockHtmlFormatter(linenos="pymdownx-inline")),  # rewrites its option to "inline"
], ids=["code", "lexer", "lexer option", "hl_lines", "title", "pymdownx inline"])
def test_any_difference_is_highlighted_again_as_pygments_does(other):
    highlight = highlight_memo.memo(pygments.highlight)
    highlight(CODE, PythonLexer(), HtmlFormatter())
    highlight(CODE, PythonLexer(), BlockHtmlFormatter(linenos="inline"))
    code, lexer, formatter = other()
    assert highlight(code, lexer, formatter) == pygments.highlight(*other())
    assert highlight.hits == 0


def test_a_shared_formatter_and_lexer_highlight_as_fresh_ones_do():
    """pymdownx.highlight's formatter and lexer, made once per distinct options
    (highlight_memo.shared): one object for the same options, another for any difference,
    and reusing them for other code gives what new ones give."""
    formatter, lexer = highlight_memo.shared(BlockHtmlFormatter), highlight_memo.shared(get_lexer_by_name)
    assert formatter(linenos="inline", hl_lines=[1]) is formatter(linenos="inline", hl_lines=[1])
    assert formatter(linenos="inline", hl_lines=[1]) is not formatter(linenos="inline", hl_lines=[2])
    assert lexer("python", stripnl=False) is lexer("python", stripnl=False) is not lexer("python")
    for code in (CODE, "x = [1, 2]\n", CODE + "print(f(2))\n"):
        for options in ({"linenos": "pymdownx-inline"}, {"hl_lines": [1], "filename": "f.py"}):
            assert (pygments.highlight(code, lexer("python"), formatter(**options))
                    == pygments.highlight(code, get_lexer_by_name("python"), BlockHtmlFormatter(**options)))


def _site(root: Path, memo: bool) -> dict[str, bytes]:
    """Build ``root`` with the memo installed or not (``cache: false`` installs nothing;
    both builds keep no verdicts, so only the memo differs) and read every file."""
    config = root / "mkdocs.yml"
    text = config.read_text(encoding="utf-8")
    runner = ("import sys; from mkdocs.__main__ import cli; "
              + ("from po_i18n import highlight_memo; highlight_memo.install(); " if memo else "")
              + "sys.argv = ['mkdocs', 'build', '-q']; cli()")
    config.write_text(re.sub(r"(?m)^  - po-i18n\b.*$", "  - po-i18n:\n      cache: false", text, count=1), encoding="utf-8")
    try:
        proc = subprocess.run([sys.executable, "-c", runner], cwd=root, capture_output=True, text=True, env=MKDOCS_ENV)
    finally:
        config.write_text(text, encoding="utf-8")
    assert proc.returncode == 0, proc.stderr[-3000:]
    site = root / "site"
    files = {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}
    shutil.rmtree(site)
    return files


@pytest.mark.site
def test_a_site_builds_to_the_same_bytes_with_the_memo(tmp_path):
    root = tmp_path / "example"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns("site", ".cache"))
    assert re.search(r"(?m)^  - po-i18n\b", (root / "mkdocs.yml").read_text(encoding="utf-8"))
    plain, memo = _site(root, memo=False), _site(root, memo=True)
    assert plain.keys() == memo.keys()
    assert [name for name in plain if plain[name] != memo[name]] == []
    assert sum(b"highlight" in content for content in plain.values()) > 3  # code blocks were highlighted
