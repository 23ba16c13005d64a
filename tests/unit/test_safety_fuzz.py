"""Proof by fuzzing: every translation the safety check accepts keeps its page's structure,
its code (character for character) and the hidden characters it shows (none the English
page does not show) when the page is rendered by the site's own Markdown engine
(po_i18n.fuzz_safety).

The run is derandomized (the same examples on every machine) and bounded by its number
of examples; ``course bench --only fuzz`` runs at least 100,000 translations.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ROOT
from po_i18n.fuzz_safety import corpus, families_table, run_fuzz
from po_i18n.project import Project

EXAMPLES = 200  # Hypothesis examples; each mutates up to MAX_MESSAGES translations of one page (~2,700 in all)


@pytest.fixture(scope="module")
def fuzz_corpus():
    pages = sorted((Path(__file__).parent / "pages").glob("*.md"))
    return corpus(Project.load(ROOT / "mkdocs.yml"), extra_pages=pages)


def test_accepted_translations_keep_the_structure_of_their_page(fuzz_corpus, capsys):
    report = run_fuzz(fuzz_corpus, EXAMPLES)  # a failure raises, shrunk to a minimal example
    with capsys.disabled():
        print(f"\nfuzz: {report.line()}\n{families_table(report)}")
    assert report.changed == 0
    assert report.tried >= 2000
    # Both sides are exercised: many translations get through (so the property says
    # something), many are refused (so the grammar attacks).
    assert 0.2 * report.tried < report.accepted < 0.8 * report.tried
    assert {"include line", "attribute list", "raw html", "control character", "new block", "invisible character",
            "invisible reference", "unicode space", "conversion spec", "space in code", "homoglyph in code",
            "invisible in code", "bidi around code", "space around code"} <= set(report.families)
