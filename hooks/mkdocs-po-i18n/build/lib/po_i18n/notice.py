"""The notice on a page whose translation is incomplete or outdated."""
from __future__ import annotations

import html

from .interface import NOTICE_LINK, NOTICE_PARTIAL, Interface

__all__ = ["with_notice"]


def with_notice(markdown: str, percent: float, english_url: str, ui: Interface, source_lang: str = "en") -> str:
    """Put the notice under the page's first heading (or at the top).

    Args:
        markdown: the rendered page.
        percent: share of the page's words that are translated, 0-100 (rounded down,
            so a page is never called 100% translated while something is English).
        english_url: URL of the English page, relative to this page.
        ui: interface strings in the page's language.
        source_lang: the language of the original the link leads to (the ``hreflang``).

    Returns:
        The page with a paragraph of class ``course-notice`` after its title.
    """
    text = ui.text(NOTICE_PARTIAL, percent=int(percent))
    # A raw <a>, not a Markdown link: MkDocs would report a Markdown link to another
    # language's page as an "unrecognized relative link" on every incomplete page.
    link = f'<a href="{html.escape(english_url)}" hreflang="{html.escape(source_lang)}">{html.escape(ui.text(NOTICE_LINK))}</a>'
    notice = f"{text} {link}\n{{: .course-notice }}\n\n"
    lines = markdown.splitlines(keepends=True)
    if lines and lines[0].startswith("# "):
        return lines[0] + "\n" + notice + "".join(lines[1:]).lstrip("\n")
    return notice + markdown
