"""The safety check's verdicts kept between builds (po_i18n.verdicts): a warm build gives
the cold build's pages and warnings without judging again, and a verdict is computed
again when anything it depends on changes."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import polib
import pytest

from example_site import EXAMPLE, MKDOCS, MKDOCS_ENV
from po_i18n import includes, page_guard, prejudge, safety, verdicts
from po_i18n.markdown_engine import MarkdownEngine

CACHE = Path(".cache/plugin/po-i18n/verdicts.json")
COUNTS = re.compile(r"verdict cache \S+: (\d+) reused, (\d+) computed")


PARALLEL = re.compile(r"po-i18n: (\d+) verdicts computed in parallel")


def _build(root: Path, cores: set[int] | None = None, log: list[str] | None = None) -> tuple[list[str], int, int]:
    """``mkdocs build -v`` of the site at ``root`` (on the given cores only, as ``taskset``
    runs it, when ``cores`` is given): its WARNING lines, and how many verdicts it reused
    and computed (the plugin's debug line); its whole log is appended to ``log``."""
    pin = (lambda: os.sched_setaffinity(0, cores)) if cores is not None else None
    proc = subprocess.run([*MKDOCS, "build", "-v"], cwd=root, capture_output=True, text=True, env=MKDOCS_ENV,
                          preexec_fn=pin)
    assert proc.returncode == 0, proc.stderr[-3000:]
    if log is not None:
        log.append(proc.stderr)
    counts = COUNTS.findall(proc.stderr)
    assert len(counts) == 1, proc.stderr[-3000:]
    return [line for line in proc.stderr.splitlines() if line.startswith("WARNING")], *map(int, counts[0])


def _site_files(site: Path) -> dict[str, bytes]:
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}


@pytest.mark.site
def test_a_warm_build_gives_the_cold_builds_pages_and_warnings_without_judging_again(tmp_path):
    root = tmp_path / "example"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns("site", ".cache"))
    catalog = polib.pofile(str(root / "i18n" / "fr" / "index.po"))
    hostile = next(e for e in catalog if e.msgstr and not e.msgid.startswith("#") and "`" not in e.msgid)
    hostile.msgstr += " [click](https://example.com/)"  # a link the English does not have: refused
    catalog.save()

    cold, reused, computed = _build(root)
    assert (root / CACHE).is_file() and computed > 50 and reused == 0
    assert any("link" in w and "index.po" in w for w in cold), cold  # the refusal is a warning
    cold_site = _site_files(root / "site")

    warm, reused, computed = _build(root)
    assert computed == 0 and reused > 50
    assert warm == cold
    assert _site_files(root / "site") == cold_site


@pytest.mark.site
@pytest.mark.skipif(prejudge.workers() < 2, reason="one core: a cold build judges in one process")
def test_a_cold_build_judged_on_every_core_gives_the_one_core_builds_pages_and_warnings(tmp_path):
    """po_i18n.prejudge: a cold build forks one judge per core; the build then finds every
    verdict computed, with the pages and warnings of a build held to one core."""
    root = tmp_path / "example"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns("site", ".cache"))
    catalog = polib.pofile(str(root / "i18n" / "fr" / "index.po"))
    hostile = next(e for e in catalog if e.msgstr and not e.msgid.startswith("#") and "`" not in e.msgid)
    hostile.msgstr += " [click](https://example.com/)"
    catalog.save()

    logs: list[str] = []
    serial, reused, computed = _build(root, cores={0}, log=logs)
    assert reused == 0 and computed > 50 and not PARALLEL.search(logs[0])
    serial_site = _site_files(root / "site")
    shutil.rmtree(root / CACHE.parent)

    parallel, reused, again = _build(root, log=logs)
    assert (parallel, reused, again) == (serial, 0, computed)  # every verdict counted as computed once
    assert _site_files(root / "site") == serial_site
    forked = int(PARALLEL.search(logs[1]).group(1))
    assert computed / 2 < forked <= computed  # the catalogs, judged by the workers (see prejudge._cold)


ENGINE = MarkdownEngine(("toc", "tables", "fenced_code", "attr_list", "pymdownx.magiclink"),
                        {"pymdownx.magiclink": {"social_url_shorthand": False}})
MENTIONS = ENGINE.configured("pymdownx.magiclink", social_url_shorthand=True)
PAGE = "# Help\n\nAsk the team.\n\n[docs]: https://example.org/docs\n"


def _judge(engine: MarkdownEngine, msgid: str, msgstr: str, kind: str = "paragraph", page: str = PAGE) -> list[str]:
    safety.clear_caches()  # judge from the store, not from this process's memory
    return safety.check_for(engine).page(page).problems(msgid, msgstr, (kind,))


@pytest.fixture
def store(tmp_path):
    store = verdicts.use(tmp_path / "cache")
    yield store
    verdicts.use(None)
    safety.clear_caches()


def test_the_same_question_is_answered_from_the_store(store):
    assert _judge(ENGINE, "Ask the team.", "Fragen Sie das Team.") == []
    assert store.misses == 2 and store.hits == 0  # the page's link definitions, then the message
    store.save()
    reopened = verdicts.use(None) or verdicts.use(store.folder)  # a new build: a new process's store
    assert _judge(ENGINE, "Ask the team.", "Fragen Sie das Team.") == []
    assert (reopened.hits, reopened.misses) == (2, 0)


@pytest.mark.parametrize("change", [
    dict(msgstr="Fragen Sie bitte das Team."),
    dict(msgid="Ask the whole team."),
    dict(kind="heading"),
    dict(page=PAGE.replace("https://example.org/docs", "https://example.org/other")),  # the page's definitions
])
def test_a_verdict_is_computed_again_when_a_part_of_its_key_changes(store, change):
    question = dict(msgid="Ask the team.", msgstr="Fragen Sie das Team.", kind="paragraph", page=PAGE)
    _judge(ENGINE, **question)
    computed = store.misses
    _judge(ENGINE, **question)
    assert store.misses == computed
    _judge(ENGINE, **{**question, **change})
    assert store.misses > computed


def test_an_engine_option_is_part_of_the_key(store):
    """With magiclink's social_url_shorthand, ``@octocat`` is a link the msgid lacks: the
    verdict stored for the engine without it must not be reused."""
    assert _judge(ENGINE, "Ask the team.", "Ask @octocat.") == []
    refused = _judge(MENTIONS, "Ask the team.", "Ask @octocat.")
    assert refused and "link" in refused[0], refused


def test_what_a_page_includes_is_part_of_its_verdicts_key(tmp_path):
    (tmp_path / "part.md").write_text("Included text.\n", encoding="utf-8")
    engine = MarkdownEngine(("toc", "pymdownx.snippets"), {"pymdownx.snippets": {"base_path": [str(tmp_path)]}})
    page = '# Page\n\n--8<-- "part.md"\n'
    includes.clear_caches()
    before = includes.included(engine, page)
    assert includes.included(engine, page) == before
    (tmp_path / "part.md").write_text("Included text, edited.\n", encoding="utf-8")
    assert includes.included(engine, page) != before
    page_guard.clear_caches()


def test_an_unreadable_store_is_ignored_and_replaced(tmp_path):
    folder = tmp_path / "cache"
    folder.mkdir()
    (folder / verdicts.FILE_NAME).write_text("{not json", encoding="utf-8")
    store = verdicts.VerdictStore(folder)
    assert store.get("k") is None
    store.put("k", ["reason"])
    store.save()
    assert verdicts.VerdictStore(folder).get("k") == ["reason"]



@pytest.mark.site
def test_a_copy_of_the_site_elsewhere_reuses_its_verdicts(tmp_path):
    """With pymdownx.snippets' base_path ``!relative $config_dir/snippets`` (an absolute
    path in each copy) counted from the site's folder, a copy's build (a moved checkout, a
    test's scratch copy) judges nothing again and warns the same."""
    first = tmp_path / "a" / "example"
    shutil.copytree(EXAMPLE, first, ignore=shutil.ignore_patterns("site", ".cache"))
    config = first / "mkdocs.yml"
    config.write_text(config.read_text(encoding="utf-8").replace(
        "markdown_extensions:\n", "markdown_extensions:\n  - pymdownx.snippets:\n"
        "      base_path: [!relative $config_dir/snippets]\n", 1), encoding="utf-8")
    (first / "snippets").mkdir()
    warnings, _, computed = _build(first)
    assert computed > 50
    second = tmp_path / "elsewhere" / "copy"
    shutil.copytree(first, second, ignore=shutil.ignore_patterns("site"))
    moved, reused, computed = _build(second)
    assert computed == 0 and reused > 50
    assert moved == warnings


def test_a_path_counts_from_the_site_folder_and_one_outside_it_as_it_is(tmp_path):
    def engine(base: Path) -> MarkdownEngine:
        return MarkdownEngine(("toc", "pymdownx.snippets"), {"pymdownx.snippets": {"base_path": [base]}})

    a, b = tmp_path / "a", tmp_path / "b"
    assert verdicts.fingerprint(engine(a / "snippets"), a) == verdicts.fingerprint(engine(b / "snippets"), b)
    assert verdicts.fingerprint(engine(a / "snippets"), a) != verdicts.fingerprint(engine(a / "other"), a)
    outside = tmp_path / "shared"
    assert verdicts.fingerprint(engine(outside), a) == verdicts.fingerprint(engine(outside), b)
    assert verdicts.fingerprint(engine(outside), a) != verdicts.fingerprint(engine(tmp_path / "elsewhere"), a)
    assert verdicts.fingerprint(engine(a / "snippets"), a) != verdicts.fingerprint(engine(a / "snippets"), b)
