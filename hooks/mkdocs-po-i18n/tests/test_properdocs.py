"""The example site (example/) built with ProperDocs, the community continuation of
MkDocs 1.x, as ``properdocs build --strict``: the same site as MkDocs builds, both languages.

ProperDocs is a drop-in because its command imports ``properdocs.replacement`` first, which
answers every ``import mkdocs.X`` with ``properdocs.X`` (a ``sys.meta_path`` finder), and it
loads plugins from the ``mkdocs.plugins`` entry points as well as its own
(``properdocs/plugins.py``: ``get_plugins``), themes from ``mkdocs.themes`` too
(``properdocs/utils/__init__.py``: ``get_themes``), keeps ``hooks:``, and reads
``mkdocs.yml`` when there is no ``properdocs.yml`` (``properdocs/config/base.py``:
``_open_config_file``, with an INFO line asking to rename it).

The build runs in a virtual environment of its own, kept in pytest's cache folder
(``.pytest_cache/d/properdocs-venv``; ``pytest --cache-clear`` remakes it), that holds
ProperDocs only and sees this interpreter's packages through a ``.pth`` line (``site``),
editable installs included:
Material, mkdocs-static-i18n, Markdown, pymdown-extensions at the very versions the
MkDocs build uses, so the two builds differ in their builder only, and making it costs
one small wheel. MkDocs stays installed beside ProperDocs, as it does for every adopter
(Material and mkdocs-static-i18n require ``mkdocs<2``); the ``properdocs`` command never
imports it. Where pip cannot reach ProperDocs (no network, nothing cached) the tests are
skipped with pip's reason; under CI (``CI=true``) they fail instead.
"""
from __future__ import annotations

import fcntl
import os
import re
import shutil
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from example_site import EXAMPLE, MKDOCS, MKDOCS_ENV, load_module

pytestmark = pytest.mark.site

SITE = EXAMPLE
PAGES = ("", "guide/install/", "guide/concepts/")
PROPERDOCS = "properdocs>=1.6,<2"
# pip's words when the package index cannot be reached or holds no such package: the one
# failure that skips outside CI (anything else, a resolution conflict say, fails)
UNREACHABLE = re.compile(r"No matching distribution found|NewConnectionError|Failed to establish a new connection"
                         r"|Temporary failure in name resolution|Network is unreachable")
GENERATOR = re.compile(rb'<meta name="generator" content="([^"]*)">')
# Reproducible builds (both builders read it): the sitemap's lastmod is not today's date,
# so the two builds agree even across midnight.
BUILD_ENV = {**MKDOCS_ENV, "SOURCE_DATE_EPOCH": "1700000000"}
pseudo = load_module(SITE / "pseudolocalize.py").pseudo_locale  # what the fr catalogs hold


def _ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _pip(venv: Path, *args: str) -> subprocess.CompletedProcess:
    """This interpreter's pip acting on ``venv`` (``pip --python``, pip 22.3+), so the
    environment needs no pip of its own."""
    return subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"),
                           "--disable-pip-version-check", *args], capture_output=True, text=True)


def _make_venv(venv: Path) -> str | None:
    """Create ``venv`` seeing this interpreter's site-packages, with ProperDocs installed.

    Returns:
        None when done, else pip's output when the index could not be reached (the caller
        skips outside CI).

    Raises:
        pytest.fail.Exception: pip failed for another reason (its output says which).
    """
    subprocess.run([sys.executable, "-m", "venv", "--clear", "--without-pip", str(venv)], check=True)
    own = Path(sysconfig.get_path("purelib", vars={"base": str(venv), "platbase": str(venv)}))
    # an executable .pth line (``site``): this interpreter's folders with their own .pth
    # files, so editable installs (the engine's plugin entry point) are seen too
    line = "import site; " + "; ".join(f"site.addsitedir({folder!r})" for folder in site.getsitepackages())
    (own / "_tests_base.pth").write_text(line + "\n", encoding="utf-8")
    proc = _pip(venv, "install", "--quiet", PROPERDOCS)
    if proc.returncode != 0:
        output = proc.stdout + proc.stderr
        if UNREACHABLE.search(output):
            return output
        pytest.fail(f"pip could not install {PROPERDOCS}:\n{output}")
    return None


@pytest.fixture(scope="module")
def properdocs(pytestconfig, tmp_path_factory) -> Path:
    """The ``properdocs`` command of an environment with ProperDocs over this interpreter's
    packages, made once and reused while those are the same."""
    cache = pytestconfig.cache.mkdir("properdocs-venv") if getattr(pytestconfig, "cache", None) else tmp_path_factory.mktemp("properdocs")
    venv, stamp = cache / "venv", cache / "stamp"
    wanted = repr((sys.version, PROPERDOCS, site.getsitepackages()))
    with open(cache / "lock", "w") as lock:  # two pytest sessions at once make it once
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (stamp.is_file() and stamp.read_text() == wanted and (venv / "bin" / "properdocs").is_file()):
            stamp.unlink(missing_ok=True)
            unreachable = _make_venv(venv)
            if unreachable is not None:
                reason = unreachable.strip().splitlines()[-1]
                if _ci():
                    pytest.fail(f"ProperDocs could not be installed under CI: {reason}")
                pytest.skip(f"Requires: [properdocs from PyPI] (pip could not install it: {reason})")
            stamp.write_text(wanted)
    return venv / "bin" / "properdocs"


def _build(command: list[str], out: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*command, "build", "--strict", "-d", str(out)], cwd=SITE, capture_output=True, text=True,
                          env=BUILD_ENV)


@pytest.fixture(scope="module")
def built(properdocs, tmp_path_factory) -> dict[str, Path]:
    """The fixture site built strict by ProperDocs and by MkDocs: ``{"properdocs": folder,
    "mkdocs": folder}``."""
    out = tmp_path_factory.mktemp("properdocs-build")
    proc = _build([str(properdocs)], out / "properdocs")
    assert proc.returncode == 0, proc.stderr
    assert "WARNING" not in proc.stderr, proc.stderr
    reference = _build(MKDOCS, out / "mkdocs")
    assert reference.returncode == 0, reference.stderr
    return {"properdocs": out / "properdocs", "mkdocs": out / "mkdocs"}


def _article(site: Path, language: str, page: str) -> BeautifulSoup:
    base = site if language == "en" else site / language
    return BeautifulSoup((base / page / "index.html").read_text(encoding="utf-8"), "html.parser").select_one("article")


def _heading_ids(site: Path, language: str, page: str) -> list[str]:
    return [h["id"] for h in _article(site, language, page).find_all(re.compile("^h[1-6]$"))]


def test_every_page_says_properdocs_generated_it(built):
    generators = {GENERATOR.search(page.read_bytes())[1].decode() for page in built["properdocs"].rglob("*.html")}
    assert len(generators) == 1 and generators.pop().startswith("mkdocs-ProperDocs "), generators


@pytest.mark.parametrize("page", PAGES)
def test_both_languages_with_the_mkdocs_builds_heading_ids(built, page):
    english, french = _article(built["properdocs"], "en", page), _article(built["properdocs"], "fr", page)
    assert french.h1.get_text().rstrip("¶") == pseudo(english.h1.get_text().rstrip("¶"))  # the catalogs were read
    assert (_heading_ids(built["properdocs"], "en", page) == _heading_ids(built["properdocs"], "fr", page)
            == _heading_ids(built["mkdocs"], "fr", page))


def test_every_file_is_the_mkdocs_builds_but_for_the_generator_line(built):
    files = {name: sorted(p.relative_to(built[name]) for p in built[name].rglob("*") if p.is_file())
             for name in ("properdocs", "mkdocs")}
    assert files["properdocs"] == files["mkdocs"]
    differ = [str(rel) for rel in files["mkdocs"]
              if GENERATOR.sub(b"", (built["properdocs"] / rel).read_bytes())
              != GENERATOR.sub(b"", (built["mkdocs"] / rel).read_bytes())]
    assert not differ, f"ProperDocs built these differently from MkDocs: {differ}"


def test_a_hook_warning_fails_the_strict_build(properdocs, tmp_path):
    """The engine logs to ``mkdocs.*`` loggers; ``properdocs build --strict`` counts warnings
    on the ``properdocs`` logger only (``properdocs/commands/build.py``), and its command
    makes ``properdocs`` the parent of the ``mkdocs`` logger (``properdocs/__main__.py``,
    ``State``), so the engine's warning still fails the build: ``???`` with pymdownx.details
    taken out of the site's mkdocs.yml, as in test_example_site.py."""
    site = tmp_path / "example"
    shutil.copytree(SITE, site, ignore=shutil.ignore_patterns("__pycache__"))  # links followed: assets/course.js
    config = site / "mkdocs.yml"
    config.write_text(config.read_text(encoding="utf-8").replace("  - pymdownx.details\n", ""), encoding="utf-8")
    proc = subprocess.run([str(properdocs), "build", "--strict", "-d", str(tmp_path / "out")], cwd=site,
                          capture_output=True, text=True, env=BUILD_ENV)
    assert proc.returncode != 0
    assert re.search(r"^WARNING +- +docs/guide/install\.md:\d+: '\?\?\?' is pymdownx\.details syntax", proc.stderr, re.M), (
        proc.stderr)
    assert re.search(r"^Aborted with \d+ warnings in strict mode!$", proc.stdout, re.M), proc.stdout  # click.echo
