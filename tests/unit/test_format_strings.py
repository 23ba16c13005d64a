"""``python-format`` translations (the site strings' ``%(name)s``): judged by allowlist,
never evaluated, by the extractor's flags rather than the catalog's."""
from __future__ import annotations

import polib
import pytest

from conftest import copy_project
from po_i18n import cli
from po_i18n.check import check_catalog, format_problems, refused_messages
from coursekit.course_strings import PROCESSES
from po_i18n.interface import Interface
from po_i18n.project import Project


@pytest.fixture
def project(tmp_path) -> Project:
    return Project.load(copy_project(tmp_path, ("mkdocs.yml", "docs", "i18n", "hooks")) / "mkdocs.yml")


def test_a_width_or_flag_the_msgid_lacks_is_refused():
    assert format_problems("%(count)d process", "%(count)2000d процесс") == [
        "placeholder %(count)2000d is not in the msgid; use one of: %(count)d",
        "placeholder %(count)d of the msgid is missing"]
    assert format_problems("%(count)d process", "%(count)-9d процесс")[0].startswith("placeholder %(count)-9d is not")
    assert format_problems("%(count)d process", "%(count)s процесс")[0].startswith("placeholder %(count)s is not")


def test_a_huge_width_is_judged_without_being_filled():
    # filled, this spec would need a terabyte (or raise OverflowError): it is only read
    found = format_problems("%(count)d process", "%(count)99999999999999999999d процесс")
    assert found[0] == "placeholder %(count)999999999999999… is not in the msgid; use one of: %(count)d"


def test_a_percent_that_starts_an_unnamed_spec_is_refused():
    assert format_problems("%(percent)d%%", "%(percent)d % o") == [
        "'% o' reads as a placeholder the msgid does not have; write a literal % as %%"]
    assert format_problems("%(percent)d%%", "%%(percent)d") == ["placeholder %(percent)d of the msgid is missing"]
    assert format_problems("%(percent)d%%", "%(percent)d%%") == []


def _plant(project: Project, msgstr: str, keep_flag: bool) -> tuple[polib.POFile, str]:
    path = project.interface_catalog_path("ru", "course")
    catalog = polib.pofile(str(path))
    entry = next(e for e in catalog if e.msgid == PROCESSES.msgid)
    entry.msgstr_plural = {i: msgstr for i in entry.msgstr_plural}
    if not keep_flag:
        entry.flags.remove("python-format")
    catalog.save(str(path))
    return catalog, path


@pytest.mark.parametrize("keep_flag", [True, False], ids=["flagged", "flag-removed-by-translator"])
def test_a_padded_plural_is_refused_and_shows_in_english(project, keep_flag):
    _, path = _plant(project, "%(count)2000d процесс", keep_flag)
    problems = check_catalog(project, path)
    assert len(problems) == 3 and all("placeholder %(count)2000d is not in the msgid" in p for p in problems), problems
    refused = refused_messages(project, path)
    assert PROCESSES.msgid in refused
    ui = Interface(polib.pofile(str(path)), frozenset(refused))
    assert ui.text(PROCESSES, count=2) == "2 processes"


def test_course_check_fails_on_it(project, capsys):
    _plant(project, "%(count)2000d процесс", keep_flag=False)
    assert cli.main(["--config", str(project.root / "mkdocs.yml"), "check", "--lang", "ru"]) == 1
    assert "i18n/ru/_course.po:" in capsys.readouterr().out
