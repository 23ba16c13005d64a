"""No catalog makes the check's work grow faster than its size: entries that can never be
shown are reported, not rendered, and a translation's unmatched ``[`` are bounded."""
from __future__ import annotations

import polib
import pytest

from conftest import copy_project
from coursekit.check import check_catalog, judged, project_check
from coursekit.project import Project
from coursekit.safety import EXTRA_BRACKETS, check_for

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
