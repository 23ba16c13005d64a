"""The segmenter's properties with the course's own Markdown engine (its mkdocs.yml)."""
from __future__ import annotations

from conftest import ROOT
from po_i18n.fuzz import RAW_WORDS, check
from po_i18n.markdown_engine import engine_for


def test_the_course_engine_agrees_on_the_syntax_it_enables():
    """The course's own mkdocs.yml (no old-style containers) on the blocks-style part of
    the grammar: the same properties with the site's exact engine."""
    engine = engine_for(ROOT / "mkdocs.yml")
    page = ("# Title { #title }\n\n/// note | A *note*\n    type: danger\n\nBody with `code`.\n///\n\n"
            "/// details | Q?\n    type: quiz\n\n- [ ] Wrong.\n- [x] Right.\n\nWhy.\n///\n\n"
            '/// tab | First\nOne.\n///\n\n!!! note "Literal"\n    text\n')
    check(page, engine, raw_words=RAW_WORDS)
