"""The repository link and "edit this page" links: only with ``REPO_URL``; English pages
edit their Markdown, translated pages their catalog, generated pages nothing."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from conftest import copy_project
from site_server import MKDOCS, MKDOCS_ENV

pytestmark = pytest.mark.site

REPO = "https://git.example.org/org/course"
BRANCH = "release/1"


def _build(project: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([*MKDOCS, "build", "--strict", "-q"], cwd=project, capture_output=True, text=True,
                          env={**MKDOCS_ENV, **env})


def _soup(site: Path, path: str) -> BeautifulSoup:
    return BeautifulSoup((site / path).read_text(encoding="utf-8"), "html.parser")


def _edit_link(soup: BeautifulSoup) -> str | None:
    link = soup.select_one('article a.md-content__button[rel="edit"]')
    return link["href"] if link else None


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    return copy_project(tmp_path_factory.mktemp("repo-links"))


@pytest.fixture(scope="module")
def linked_site(project) -> Path:
    """The site built with ``REPO_URL`` and ``REPO_BRANCH``."""
    proc = _build(project, REPO_URL=REPO, REPO_BRANCH=BRANCH)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return project / "site"


@pytest.mark.parametrize(("path", "edited"), [
    ("index.html", "docs/index.md"),
    ("ddp-basics/index.html", "docs/ddp-basics.md"),
    ("ja/index.html", "i18n/ja/index.po"),
    ("ja/ddp-basics/index.html", "i18n/ja/ddp-basics.po"),
])
def test_edit_link_opens_the_source_of_the_page_in_its_language(linked_site, path, edited):
    soup = _soup(linked_site, path)
    assert _edit_link(soup) == f"{REPO}/edit/{BRANCH}/{edited}"
    assert [a["href"] for a in soup.select("a.md-source")] == [REPO, REPO]  # header and drawer


@pytest.mark.parametrize("path", ["translation-status/index.html", "ja/translation-status/index.html", "404.html"])
def test_generated_pages_have_no_edit_link(linked_site, path):
    soup = _soup(linked_site, path)
    assert _edit_link(soup) is None
    assert soup.select_one("a.md-source")["href"] == REPO


def test_the_repository_link_fetches_nothing_from_the_host(linked_site):
    """Material's source component would fetch stars and forks from the host's API."""
    assert not _soup(linked_site, "index.html").select('[data-md-component="source"]')


def test_without_repo_url_no_repository_or_edit_link(project, tmp_path):
    proc = subprocess.run([*MKDOCS, "build", "--strict", "-q", "--site-dir", str(tmp_path / "site")], cwd=project,
                          capture_output=True, text=True, env=MKDOCS_ENV)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for path in ("index.html", "ddp-basics/index.html", "ja/ddp-basics/index.html"):
        soup = _soup(tmp_path / "site", path)
        assert _edit_link(soup) is None and not soup.select("a.md-source"), path


@pytest.mark.parametrize(("env", "line"), [
    ({"REPO_URL": "ssh://git@git.example.org/org/course"},
     "environment variable REPO_URL: 'ssh://git@git.example.org/org/course' is not an http(s) URL; "
     "set it to the repository's web address (REPO_URL=https://github.com/org/course) or leave it unset "
     "for no repository links"),
    ({"REPO_URL": "https://github.com/org/course#readme"},
     "environment variable REPO_URL: 'https://github.com/org/course#readme' has a query or fragment"),
    # No scheme (or no host): MkDocs's own check of repo_url, as for SITE_URL's site_url.
    ({"REPO_URL": "github.com/org/course"},
     "Config value 'repo_url': The URL isn't valid, it should include the http:// (scheme)"),
    ({"REPO_URL": REPO, "REPO_BRANCH": "../main"},
     "environment variable REPO_BRANCH: '../main' is not a branch name"),
])
def test_a_bad_repository_address_stops_the_build_in_one_line(project, env, line):
    proc = _build(project, **env)
    assert proc.returncode != 0
    errors = [entry for entry in proc.stderr.splitlines() if entry.startswith("ERROR")]
    assert len(errors) == 1 and line in errors[0], proc.stderr
