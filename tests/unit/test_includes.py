"""coursekit.includes: the broken include of a page, found and described with
pymdownx.snippets' own preprocessor (the build's side is tests/site/test_include_errors.py)."""
from __future__ import annotations

import pytest

from coursekit.includes import broken_includes, snippet_preprocessor


@pytest.fixture
def site(tmp_path):
    (tmp_path / "snippets" / "lesson").mkdir(parents=True)
    (tmp_path / "snippets" / "lesson" / "prog.py").write_text(
        "# --8<-- [start:setup]\nx = 1\n# --8<-- [end:setup]\n# --8<-- [start:run]\ny = 2\n# --8<-- [end:run]\n")
    (tmp_path / "snippets" / "lesson" / "plain.py").write_text("z = 3\n")
    (tmp_path / "docs").mkdir()
    return tmp_path


def check(site, page_text: str) -> list[str]:
    page = site / "docs" / "page.md"
    page.write_text(page_text, encoding="utf-8")
    pre = snippet_preprocessor({"base_path": [str(site / "snippets")], "check_paths": True})
    return broken_includes(page, pre, site)


def test_a_page_whose_includes_resolve_has_no_problem(site):
    assert check(site, '# Page\n\n```py\n--8<-- "lesson/prog.py:run"\n```\n\n--8<-- "lesson/plain.py"\n') == []


def test_the_line_counts_the_front_matter(site):
    problems = check(site, '---\ntitle: Page\n---\n# Page\n\n```py\n--8<-- "lesson/prog.py:rnu"\n```\n')
    assert problems == ["docs/page.md:7: --8<-- \"lesson/prog.py:rnu\": snippets/lesson/prog.py has no section 'rnu' "
                        "(its sections: setup, run); name one of them (did you mean 'run'?), or mark the lines in the "
                        "file with '# --8<-- [start:rnu]' and '# --8<-- [end:rnu]'"]


def test_the_first_broken_include_of_the_page_is_named(site):
    problems = check(site, '--8<-- "lesson/prog.py:run"\n\n--8<-- "lesson/plain.py:setup"\n\n--8<-- "lesson/gone.py"\n')
    assert problems == ["docs/page.md:3: --8<-- \"lesson/plain.py:setup\": snippets/lesson/plain.py has no section "
                        "'setup' (it marks no section); name one of them, or mark the lines in the file with "
                        "'# --8<-- [start:setup]' and '# --8<-- [end:setup]'"]


def test_a_missing_file_in_a_block_include_names_the_base_path(site):
    problems = check(site, "# Page\n\n--8<--\nlesson/prog.py\nlesson/porg.py\n--8<--\n")
    assert problems == ['docs/page.md:5: --8<-- "lesson/porg.py": there is no file lesson/porg.py under the snippets '
                        "base path snippets/; fix the path (did you mean lesson/prog.py?)"]


def test_without_check_paths_nothing_is_checked():
    assert snippet_preprocessor({"base_path": ["."], "check_paths": False}) is None
