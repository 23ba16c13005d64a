"""No catalog makes the check's work grow faster than its size: entries that can never be
shown are reported, not rendered, and a translation's unmatched ``[`` are bounded."""
from __future__ import annotations

import polib
import pytest

from conftest import ROOT, copy_project
from po_i18n.check import check_catalog, judged, project_check
from po_i18n.project import Project
from po_i18n.safety import EXTRA_BRACKETS, check_for

HAND_ADDED = "A paragraph no page has. " * 80  # 2,000 characters


@pytest.fixture
def project(tmp_path) -> Project:
    return Project.load(copy_project(tmp_path, ("mkdocs.yml", "docs", "i18n", "hooks")) / "mkdocs.yml")


def test_an_entry_on_no_page_is_reported_and_never_rendered(project):
    path = project.catalog_path("ja", "ddp-basics.md")
    catalog = polib.pofile(str(path))
    catalog.append(polib.POEntry(msgid=HAND_ADDED, msgstr="![" * 3000))
    catalog.save(str(path))
    problems = check_catalog(project, path)
    assert len(problems) == 1 and "is not in the English source" in problems[0], problems
    rows = list(judged(project, path, polib.pofile(str(path)), project_check(project)))
    assert HAND_ADDED not in {entry.msgid for entry, *_ in rows}
    assert len(rows) > 100  # the page's own translations are still judged


def test_a_translation_with_many_more_brackets_than_its_msgid_is_refused(project):
    check = check_for(project.engine)
    msgid = "Run `torchrun` on [every node](launching.md) of the job."
    fine = "ジョブの[すべてのノード](launching.md)で `torchrun` を実行します［注］。"
    assert check.problems(msgid, fine) == []
    assert check.problems(msgid, fine + " [a]" * EXTRA_BRACKETS) == []
    refused = check.problems(msgid, fine + " [" * (EXTRA_BRACKETS + 1))
    assert refused == [f"has {EXTRA_BRACKETS + 1} more [ than the msgid (at most {EXTRA_BRACKETS} more are accepted: "
                       "each one makes the Markdown link parser read the rest of the text again); keep the msgid's brackets"]


def test_a_page_whose_translations_keep_breaking_it_together_is_shown_in_english_after_a_bound(monkeypatch):
    """Each translation refused for what it does together with others costs a bisection of
    page renderings; after ``MAX_TOGETHER`` of them the rest of the page is refused at once."""
    from po_i18n import catalog as po
    from po_i18n import page_guard
    from po_i18n.segment import segment

    project = Project.load(ROOT / "mkdocs.yml")  # read only; its pages include the programs in snippets/
    source = (project.docs_dir / "torchrun-launching.md").read_text(encoding="utf-8")
    table = po.translations(po.load(project.catalog_path("tr", "torchrun-launching.md")))
    paragraphs = [s.msgid for s in segment(source, project.engine) if s.kind == "paragraph" and s.msgid in table]
    hostile = dict(table)
    for i, msgid in enumerate(paragraphs):  # harmless alone; "&#" then "</img>" unsettle html.parser together
        hostile[msgid] = ("&#" if i % 2 == 0 else "</img>") + table[msgid]
    unbounded = page_guard.refused_together(project.engine, source, hostile, "en")
    assert len(unbounded) > 2 and all(r.startswith(page_guard.TOGETHER + ": ") for r in unbounded.values())
    page_guard.clear_caches()
    monkeypatch.setattr(page_guard, "MAX_TOGETHER", 2)
    bounded = page_guard.refused_together(project.engine, source, hostile, "en")
    assert sum(r.startswith(page_guard.TOGETHER) for r in bounded.values()) == 2
    translated = {s.msgid for s in segment(source, project.engine) if hostile.get(s.msgid) not in (None, "", s.msgid)}
    assert set(bounded) == translated  # the first two by bisection, every other one at once
    assert list(bounded.values()).count(page_guard.TOO_MANY) == len(translated) - 2
