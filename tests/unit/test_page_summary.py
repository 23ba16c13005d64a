"""coursekit.page_summary: the first paragraph of prose, cut to a description; Open Graph locales."""
from __future__ import annotations

import pytest

from coursekit.page_summary import MAX_LENGTH, first_paragraph, og_locale, shorten


def test_first_paragraph_after_the_title_skips_notices_and_lists():
    html = ('<p>Before the title.</p><h1 id="t">Title<a class="headerlink">&para;</a></h1>'
            '<div class="admonition note"><p class="admonition-title">Note</p><p>A notice.</p></div>'
            '<ul><li><p>An item.</p></li></ul><details class="quiz"><p>Quiz.</p></details>'
            '<p>The <code>torchrun</code> &amp; <em>its\n  ranks</em>.<br>Next line.</p><p>Second.</p>')
    assert first_paragraph(html) == "The torchrun & its ranks.Next line."


def test_no_title_or_no_paragraph_gives_nothing():
    assert first_paragraph("<p>No title.</p>") == ""
    assert first_paragraph("<h1>Title</h1><table><tr><td><p>Cell.</p></td></tr></table>") == ""


@pytest.mark.parametrize(("text", "expected"), [
    ("Short enough.", "Short enough."),
    # A whole sentence that fits, and is long enough, needs no ellipsis.
    ("A" * 70 + ". " + "b " * 60, "A" * 70 + "."),
    # Else the last word that fits, with an ellipsis.
    ("Tiny. " + "word " * 40, ("Tiny. " + "word " * 30).rstrip() + "…"),
    # Japanese: after the last 。 that fits.
    ("あ" * 60 + "。" + "い" * 120, "あ" * 60 + "。"),
    # No space and no sentence end: cut at the limit.
    ("あ" * 200, "あ" * (MAX_LENGTH - 1) + "…"),
])
def test_shorten(text, expected):
    assert shorten(text) == expected
    assert len(shorten(text)) <= MAX_LENGTH


@pytest.mark.parametrize(("language", "locale"), [("en", "en_US"), ("ru", "ru_RU"), ("ja", "ja_JP"), ("tr", "tr_TR"),
                                                   ("sv", "sv_SE"), ("pt-BR", "pt_BR")])
def test_og_locale(language, locale):
    assert og_locale(language) == locale
