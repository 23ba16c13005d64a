"""The reader's site in a real browser: Playwright driving Debian's Chromium.

The site is built with ``SITE_URL`` under a sub-path (``/course/``) of a local server on
127.0.0.1, as a real host would serve it, and every request the pages make is recorded.
Facts about running Chromium here: ``shared/BROWSER-FACTS.md``.
"""
from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import polib
import pytest

from conftest import LANGUAGES, ROOT, TRANSLATIONS, snippet_section
from site_server import linked_copy, serve_built_site, serve_folder, shared_build
from po_i18n.project import Project

pytestmark = pytest.mark.browser

PROJECT = Project.load(ROOT / "mkdocs.yml")
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
]
# What a reader of each language types to find the DDP lesson: the lesson's heading on
# shuffling between epochs, as the language's own catalog translates it (no other lesson
# shuffles), so a language added to mkdocs.yml is searched in its own words.
SEARCH_HEADING = "Shuffle differently every epoch"
# The issue's own examples: the gradient in Japanese and Russian finds the DDP lesson.
GRADIENT_WORDS = {"ja": "勾配", "ru": "градиенты"}
LESSON = "ddp-basics"
SUB_PATH = "/course/"


def _require_chromium() -> None:
    if Path(CHROMIUM).is_file():
        return
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail("Chromium is missing under CI: .ci/run must install Debian's chromium")
    pytest.skip("Requires: [Debian chromium] (apt-get install chromium)")


@pytest.fixture(scope="module")
def hosted(tmp_path_factory):
    """The site built for http://127.0.0.1:PORT/course/ and served from there:
    ``(its URL, the folder it was built into)``."""
    _require_chromium()
    served = tmp_path_factory.mktemp("served")
    with serve_built_site(served, SUB_PATH) as site_url:
        yield site_url, served / SUB_PATH.strip("/")


@pytest.fixture(scope="module")
def server(hosted):
    return hosted[0]


@pytest.fixture(scope="module")
def anywhere(tmp_path_factory):
    """The default build (no ``SITE_URL``, as ``make site`` makes it), served under
    /course/ all the same: ``(its URL, the folder it was built into)``."""
    _require_chromium()
    served = tmp_path_factory.mktemp("anywhere")
    site = linked_copy(shared_build(tmp_path_factory)[0], served / SUB_PATH.strip("/"))  # the session's build
    with serve_folder(served) as base:
        yield base + SUB_PATH.lstrip("/"), site


@pytest.fixture(scope="module")
def browser(server):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser, request, tmp_path_factory):
    """A fresh page whose every request is recorded in ``page.requests``; on failure,
    screenshots of the lesson in each language at phone and desktop width are saved."""
    context = browser.new_context(permissions=["clipboard-read", "clipboard-write"])
    pg = context.new_page()
    pg.requests = []
    pg.on("request", lambda r: pg.requests.append(r.url))
    yield pg
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        out = Path(os.environ.get("COURSE_ARTIFACTS", tmp_path_factory.getbasetemp() / "screenshots"))
        out.mkdir(parents=True, exist_ok=True)
        base = pg.url.split(SUB_PATH)[0] + SUB_PATH if SUB_PATH in pg.url else None
        for width, name in ((390, "phone"), (1280, "desktop")):
            pg.set_viewport_size({"width": width, "height": 900})
            for lang in LANGUAGES if base else ():
                pg.goto(_url(base, lang, LESSON))
                pg.screenshot(path=str(out / f"{request.node.name}-{lang}-{name}.png"), full_page=True)
        print(f"screenshots in {out}")
    context.close()


def _open(pg, url: str):
    """Go to ``url`` and wait, as a reader does, until the page responds: its scripts load
    after the first paint (coursekit.page_scripts), and ``<html data-course-scripts>``
    says once Material has started. Returns the navigation's response."""
    response = pg.goto(url)
    pg.locator("html[data-course-scripts=started]").wait_for(state="attached", timeout=10_000)
    return response


def _url(base: str, language: str, page: str, fragment: str = "") -> str:
    prefix = "" if language == PROJECT.default_language else f"{language}/"
    return f"{base}{prefix}{page}/{fragment}"


def search_words(language: str) -> str:
    """:data:`SEARCH_HEADING` in ``language``: the msgstr of its catalog of the lesson."""
    if language == PROJECT.default_language:
        return SEARCH_HEADING
    catalog = polib.pofile(str(PROJECT.catalog_path(language, f"{LESSON}.md")))
    entry = catalog.find(SEARCH_HEADING)
    assert entry is not None and entry.msgstr and not entry.fuzzy, (
        f"{PROJECT.catalog_path(language, f'{LESSON}.md')}: no translation of the heading {SEARCH_HEADING!r}")
    return entry.msgstr


def _search(pg, word: str):
    pg.click("input.md-search__input")
    pg.locator(".md-search-result__meta").wait_for()
    pg.locator("input.md-search__input").press_sequentially(word, delay=30)
    pg.keyboard.press("End")  # Material reads the query on key-up; IME-style input has none
    pg.locator(".md-search-result__item a").first.wait_for(timeout=10_000)
    # The worker answers every prefix typed, so the list re-renders while the query grows
    # (a reading taken mid-render once saw six results and then waited for a sixth that was
    # gone). Read all links in one step and return only a list that held still for 0.5 s.
    previous, deadline = None, time.monotonic() + 15
    while True:
        hrefs = pg.locator(".md-search-result__item > a").evaluate_all(
            "links => links.map(a => a.getAttribute('href'))")
        if hrefs == previous or time.monotonic() > deadline:
            return hrefs
        previous = hrefs
        pg.wait_for_timeout(500)


@pytest.mark.parametrize("language", LANGUAGES)
def test_search_finds_the_lesson_in_the_same_language_only(server, page, language):
    _open(page, _url(server, language, LESSON))
    hits = _search(page, search_words(language))
    assert hits, language
    first = urlparse(hits[0]).path
    assert first == urlparse(_url(server, language, LESSON)).path, hits[0]
    for hit in hits:  # never a page of another language
        path = urlparse(hit).path[len(SUB_PATH):]
        head = path.split("/", 1)[0]
        assert (head == language) if language != PROJECT.default_language else head not in PROJECT.languages, hit


@pytest.mark.parametrize("language", sorted(GRADIENT_WORDS))
def test_the_word_for_gradient_finds_the_lesson(server, page, language):
    _open(page, _url(server, language, LESSON))
    paths = [urlparse(h).path for h in _search(page, GRADIENT_WORDS[language])]
    assert urlparse(_url(server, language, LESSON)).path in paths


def test_japanese_search_segments_words(server, page):
    _open(page, _url(server, "ja", LESSON))
    requested = []
    page.on("request", lambda r: requested.append(r.url))
    _search(page, search_words("ja"))
    assert any(u.endswith("/ja/search/search_index.json") for u in page.requests + requested)
    assert any("tinyseg" in u for u in page.requests + requested)


@pytest.mark.parametrize("language", TRANSLATIONS)
def test_language_switch_keeps_page_and_section(server, page, language):
    _open(page, _url(server, "en", LESSON, "#wrap-the-model"))
    page.locator(f"a.md-select__link[hreflang={language}]").first.dispatch_event("click")
    page.wait_for_url(re.compile(re.escape(_url(server, language, LESSON)) + "#wrap-the-model$"))
    assert page.locator("html").get_attribute("lang") == language
    assert page.locator("#wrap-the-model").count() == 1


def test_copy_button_copies_exactly_the_snippet_section(server, page):
    _open(page, _url(server, "ja", LESSON))
    # the first program section (the launch line comes before it, then its collapsed output)
    block = page.locator("article div.language-py.highlight").first
    block.hover()
    block.locator("button.md-code__button[data-md-type=copy]").click()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied.rstrip("\n") == snippet_section(ROOT / "snippets" / "ddp_basics" / "train.py", "setup")


def test_a_code_block_is_mounted_when_it_scrolls_into_view(server, page):
    # mkdocs.yml's content.lazy: at load only the blocks in view get their buttons (each
    # mount is a forced layout of the whole page); the last block gets its own on arrival.
    _open(page, _url(server, "en", LESSON))
    page.wait_for_load_state("load")
    # not in a closed output or a hidden tab: straight under the article or a section body
    blocks = page.locator("article > div.highlight, article > div.course-section > div.highlight")
    last = blocks.last
    copy = last.locator("button.md-code__button[data-md-type=copy]")
    assert copy.count() == 0
    last.scroll_into_view_if_needed()
    copy.wait_for(state="attached", timeout=5000)
    assert blocks.locator("button.md-code__button[data-md-type=copy]").count() < blocks.count()


def test_sections_out_of_view_are_rendered_when_the_reader_gets_there(server, page):
    # coursekit.sections + course.css: at load the browser skips rendering the bodies of
    # sections far down the lesson (content-visibility: auto); a link to a heading there
    # still lands on the heading, with its section's body rendered under it.
    rendered = "el => el.checkVisibility({contentVisibilityAuto: true})"
    _open(page, _url(server, "en", LESSON))
    page.wait_for_load_state("load")
    bodies = page.locator("article > div.course-section")
    n = bodies.count()
    assert n >= 10
    assert bodies.first.locator(":scope > *").first.evaluate(rendered)
    middle = bodies.nth(n // 2).locator(":scope > *").first
    assert not middle.evaluate(rendered)
    heading_id = bodies.nth(n // 2).evaluate("el => el.previousElementSibling.id")
    page.goto("about:blank")
    _open(page, _url(server, "en", LESSON, f"#{heading_id}"))
    page.wait_for_load_state("load")
    middle = page.locator("article > div.course-section").nth(n // 2).locator(":scope > *").first
    middle.wait_for(state="visible", timeout=5000)  # Material's own scroll handling after load
    assert middle.evaluate(rendered)
    header = page.locator("header.md-header").bounding_box()["height"]
    top = page.locator(f"[id='{heading_id}']").bounding_box()["y"]
    assert abs(top - header) < 40, (top, header)  # the heading sits just under the header


@pytest.mark.parametrize("language", LANGUAGES)
def test_nothing_is_loaded_from_another_host(server, page, language):
    for target in ("", f"{LESSON}/"):
        _open(page, _url(server, language, target.rstrip("/")) if target else (server if language == "en" else f"{server}{language}/"))
        page.wait_for_load_state("networkidle")
    hosts = {urlparse(u).netloc for u in page.requests if not u.startswith("data:")}
    assert hosts == {urlparse(server).netloc}, hosts


def _quiz_strings(language: str) -> dict:
    """The quick-check strings as the page must show them, from the course's catalog."""
    import polib

    english = {"check": "Check", "right": "Right.", "wrong": "Not quite: the right answer is now marked."}
    if language == PROJECT.default_language:
        return english
    catalog = polib.pofile(str(PROJECT.interface_catalog_path(language, "course")))
    return {key: (catalog.find(text).msgstr or text) for key, text in english.items()}


@pytest.mark.parametrize("language", LANGUAGES)
def test_quick_check_gives_feedback_in_the_pages_language(server, page, language):
    _open(page, _url(server, language, LESSON))
    strings = _quiz_strings(language)
    quiz = page.locator("details.quiz").first
    # a quiz is made into a form only as it first opens (course.js): none at load
    assert page.locator("details.quiz form.course-quiz").count() == 0
    assert page.locator("details.quiz ul.task-list").count() == page.locator("details.quiz").count() >= 2
    quiz.locator("summary").click()
    form = quiz.locator("form.course-quiz")
    radios = form.locator("input[type=radio]")
    n = radios.count()  # the options of the lesson's first question
    assert n >= 3
    right = [i for i in range(n) if radios.nth(i).get_attribute("data-right") == "true"]
    assert len(right) == 1
    explanation = quiz.locator(":scope > p").first
    assert explanation.is_hidden()
    # keyboard only: focus a wrong option, select it, submit with Enter on the button
    wrong = next(i for i in range(n) if i not in right)
    radios.nth(wrong).focus()
    page.keyboard.press("Space")
    assert form.locator("button").inner_text() == strings["check"]
    form.locator("button").focus()
    page.keyboard.press("Enter")
    feedback = form.locator(".course-quiz__feedback")
    assert feedback.inner_text() == strings["wrong"]
    assert explanation.is_visible()
    assert form.locator("label.course-quiz__right input").get_attribute("data-right") == "true"
    radios.nth(right[0]).check()
    form.locator("button").click()
    assert feedback.inner_text() == strings["right"]
    # opened from the keyboard, the next quiz is a form too, with radios of its own name
    second = page.locator("details.quiz").nth(1)
    second.locator("summary").focus()
    page.keyboard.press("Enter")
    assert second.evaluate("el => el.open") and second.locator("ul.task-list").count() == 0
    names = {r.get_attribute("name") for r in second.locator("form.course-quiz input[type=radio]").all()}
    assert len(names) == 1 and names != {radios.first.get_attribute("name")}


def test_the_js_class_stays_where_material_runs_and_goes_where_its_bundle_fails(server, browser):
    """The head sets Material's ``js`` class before the first paint (coursekit.page_scripts).
    Where Material's bundle then runs, the class stays and its search button shows; where
    the bundle fails to load, the page says so and goes back to ``no-js``, so Material's
    CSS hides the search box that would do nothing."""
    for fails in ("", "aborted", "throws"):
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        try:
            pg = context.new_page()
            if fails == "aborted":
                pg.route("**/assets/javascripts/bundle.*.min.js", lambda route: route.abort())
            elif fails == "throws":  # loads, but throws before Material starts
                pg.route("**/assets/javascripts/bundle.*.min.js", lambda route: route.fulfill(
                    status=200, content_type="text/javascript", body='throw new Error("bundle")'))
            pg.goto(_url(server, "sv", LESSON))
            pg.locator("html[data-course-scripts]").wait_for(state="attached", timeout=10_000)
            root = pg.locator("html")
            assert root.get_attribute("data-course-scripts") == ("failed" if fails else "started"), fails
            classes = root.evaluate("el => [...el.classList]")
            assert ("no-js" in classes, "js" in classes) == (bool(fails), not fails), (fails, classes)
            assert pg.locator(".md-search").is_visible() is not bool(fails), fails  # the header's search box
        finally:
            context.close()


def test_quick_check_without_javascript_reveals_the_answer(server, browser):
    context = browser.new_context(java_script_enabled=False)
    pg = context.new_page()
    pg.goto(_url(server, "ru", LESSON))
    quiz = pg.locator("details.quiz").first
    quiz.locator("summary").click()
    options = quiz.locator("li.task-list-item")
    n = options.count()
    assert n >= 3
    checked = [i for i in range(n) if options.nth(i).locator("input[checked]").count()]
    assert len(checked) == 1 and options.nth(checked[0]).is_visible()
    assert quiz.locator(":scope > p").first.is_visible()
    context.close()


def _result_groups(pg, query: str) -> list[list[tuple[str, frozenset[str]]]]:
    """Search results as the reader sees them: one list per page (Material groups the
    hits of a page), each hit as ``(path, the query terms Material highlights in it)``."""
    field, meta = pg.locator("input.md-search__input"), pg.locator(".md-search-result__meta")
    field.click()
    field.fill("")
    # Material shows its "type to start searching" text once the worker has built the index
    waiting = pg.evaluate("JSON.parse(document.getElementById('__config').textContent).translations['search.result.placeholder']")
    pg.wait_for_function("t => document.querySelector('.md-search-result__meta').innerText === t", arg=waiting, timeout=60_000)
    field.press_sequentially(query, delay=30)
    pg.keyboard.press("End")  # Material reads the query on key-up
    read = ("groups => groups.map(g => Array.from(g.querySelectorAll('a')).map(a => a.getAttribute('href')))")
    previous, settled, deadline = None, 0, time.monotonic() + 30
    while time.monotonic() < deadline:  # the worker answers every prefix typed: wait until it held still
        current = (meta.inner_text(), pg.locator("li.md-search-result__item").evaluate_all(read))
        settled = settled + 1 if current == previous and current[0] != waiting else 0
        if settled >= 3:
            break
        previous = current
        pg.wait_for_timeout(300)
    groups = []
    for hrefs in previous[1]:
        hits = []
        for href in hrefs:
            url = urlparse(href)
            terms = parse_qs(url.query).get("h", [""])[0].split()
            hits.append((url.path + (f"#{url.fragment}" if url.fragment else ""), frozenset(terms)))
        groups.append(hits)
    return groups


def _pages(groups) -> set[str]:
    return {hits[0][0].split("#")[0] for hits in groups}


# How Japanese readers type: compounds and phrases with particles, no spaces; with the
# words each is made of (の, a particle, says nothing about the topic).
JAPANESE_COMPOUNDS = {"学習ループ": ("学習", "ループ"), "勾配の平均": ("勾配", "平均"), "勾配の同期": ("勾配", "同期")}


@pytest.mark.parametrize("compound", sorted(JAPANESE_COMPOUNDS))
def test_japanese_search_finds_what_the_parts_of_a_compound_find(server, page, compound):
    parts = JAPANESE_COMPOUNDS[compound]
    _open(page, _url(server, "ja", LESSON))
    found = _result_groups(page, compound)
    assert found, compound
    assert found == _result_groups(page, " ".join(parts))  # as if typed with spaces, in the same order
    by_part = [_pages(_result_groups(page, part)) for part in parts]
    assert _pages(found) == set().union(*by_part)  # what the parts find, and nothing else
    # ranked sensibly: the first page has a section that holds every part
    assert any(set(parts) <= terms for _, terms in found[0]), found[0]


@pytest.mark.parametrize("word", ["勾配", "学習", "ループ", "学習 ループ"])
def test_japanese_search_for_words_and_spaced_words_keeps_working(server, page, word):
    _open(page, _url(server, "ja", LESSON))
    found = _result_groups(page, word)
    assert found and all(set(word.split()) & terms for hits in found for _, terms in hits[1:]), found


def _served_index(site: Path, language: str) -> list[dict]:
    import json

    return json.loads((site / language / "search" / "search_index.json").read_text(encoding="utf-8"))["docs"]


@pytest.mark.parametrize("spellings", [("dağıtık", "DAĞITIK", "Dağıtık"), ("işlem", "İşlem", "İŞLEM")])
def test_turkish_search_ignores_case(server, page, spellings):
    _open(page, _url(server, "tr", LESSON))
    results = [_result_groups(page, spelling) for spelling in spellings]
    assert results[0], spellings
    assert all(r == results[0] for r in results), dict(zip(spellings, results))


def test_turkish_search_finds_a_capital_dotted_i(hosted, page):
    """A sentence-initial İlk ('first') is found by ilk: the indexed text is lower-cased
    the Turkish way (İ → i), not to i + U+0307."""
    server, site = hosted
    capital_only = [d["location"] for d in _served_index(site, "tr")
                    if re.search(r"\bİlk", d["title"] + " " + d["text"]) and not re.search(r"\bilk", d["title"] + " " + d["text"])]
    assert capital_only, "no Turkish section writes İlk without also writing ilk"
    _open(page, _url(server, "tr", LESSON))
    found = {path for hits in _result_groups(page, "ilk") for path, _ in hits}
    for location in capital_only:
        assert f"{SUB_PATH}tr/{location}" in found, (location, found)
    marks = page.locator(".md-search-result mark").evaluate_all("ms => ms.map(m => m.textContent)")
    assert "İlk" in marks, marks  # highlighted as written: what the reader sees keeps its capital


def _every_page(site: Path) -> list[str]:
    """The address of every page of every language, 404 pages included, under the site."""
    return sorted(str(p.relative_to(site)).removesuffix("index.html") for p in site.rglob("*.html"))


def _watch(pg, site_url: str) -> list[str]:
    """What went wrong on a page: failed requests, error responses, console errors, and
    any request to a host other than the site's. A request that a page still had in flight
    when the next page was opened (Material's search worker loading lunr.ja, say) and that
    the browser therefore aborted (``net::ERR_ABORTED``) is not a failure: a reader who
    follows a link before a page has settled does the same."""
    problems = []
    host = urlparse(site_url).netloc
    started = [0]  # top-level navigations started (their navigation requests)
    current = [0]  # which of them gave the document now shown
    owner: dict = {}  # request -> the navigation whose document issued it

    def on_committed(frame):
        if frame == pg.main_frame:
            current[0] = started[0]

    def on_request(r):
        if r.is_navigation_request() and r.frame == pg.main_frame:
            started[0] += 1
        owner[r] = current[0]
        if urlparse(r.url).scheme in ("http", "https") and urlparse(r.url).netloc != host:
            problems.append(f"request to another host: {r.url}")

    def on_request_failed(r):
        left_behind = r.failure == "net::ERR_ABORTED" and owner.get(r, started[0]) < started[0]
        if not left_behind:
            problems.append(f"failed {r.url}: {r.failure}")

    pg.on("framenavigated", on_committed)
    pg.on("request", on_request)
    pg.on("requestfailed", on_request_failed)
    pg.on("response", lambda r: r.status >= 400 and problems.append(f"{r.status} {r.url}"))
    pg.on("console", lambda m: m.type == "error" and problems.append(f"console error at {m.location.get('url')}: {m.text}"))
    pg.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    return problems


TABS = 4  # pages loading at once in the next test


@pytest.mark.parametrize("build", ["anywhere", "hosted"])
def test_every_page_loads_without_a_failed_request_or_console_error(request, browser, build):
    """Every page in every language, served under /course/: built without SITE_URL
    (``anywhere``) and for that address (``hosted``). Its language selector leads to
    pages that exist."""
    url, site = request.getfixturevalue(build)
    context = browser.new_context()
    # Pages load in TABS tabs at once, each waited for as one tab would be: most of a
    # page's time is the network's quiet half second that "networkidle" waits for, and the
    # tabs wait it out together (about 115 s for ~250 pages, half of one tab's time; eight
    # tabs gain 10 % more: the rest is the browser's work on two cores).
    tabs = [(pg, _watch(pg, url)) for pg in (context.new_page() for _ in range(TABS))]
    pages = _every_page(site)
    for start in range(0, len(pages), TABS):
        batch = list(zip(tabs, pages[start:start + TABS]))
        for (pg, _), path in batch:
            pg.goto(url + path, wait_until="commit")
        for (pg, problems), path in batch:
            pg.locator("html[data-course-scripts=started]").wait_for(state="attached", timeout=10_000)
            pg.wait_for_load_state("networkidle")
            assert pg.evaluate("getComputedStyle(document.querySelector('.md-header')).position") == "sticky", path
            for href in pg.locator("a.md-select__link").evaluate_all("links => links.map(a => a.href)"):
                assert href.startswith(url), (path, href)
                target = site / href[len(url):]
                assert (target / "index.html" if href.endswith("/") else target).is_file(), (path, href)
            assert not problems, (path, problems)
    context.close()


@pytest.mark.parametrize("build", ["anywhere", "hosted"])
@pytest.mark.parametrize("missing", ["ru/no-such-page/", "ja/ddp-basics/gone/deeper/", "ddp-basics/old-section/", "no-such-lesson/"])
def test_a_missing_address_shows_its_languages_404_page_styled_and_linked(request, browser, build, missing):
    """As a host shows them (README's "Deploying"): the nearest 404 page, at the missing
    address. It loads its stylesheets and scripts, and its links lead to each language's
    home page; only the page itself answers 404."""
    url, site = request.getfixturevalue(build)
    language = missing.split("/")[0] if missing.split("/")[0] in PROJECT.languages else PROJECT.default_language
    context = browser.new_context()
    pg = context.new_page()
    problems = _watch(pg, url)
    response = _open(pg, url + missing)
    pg.wait_for_load_state("networkidle")
    assert response.status == 404
    expected = {f"404 {url}{missing}", f"console error at {url}{missing}: Failed to load resource: "
                                       "the server responded with a status of 404 (Not Found)"}
    assert set(problems) <= expected and problems, problems  # the page itself, nothing else
    assert pg.locator("html").get_attribute("lang") == language
    assert pg.evaluate("getComputedStyle(document.querySelector('.md-header')).position") == "sticky"
    links = dict(zip(pg.locator("a.md-select__link").evaluate_all("ls => ls.map(a => a.hreflang)"),
                     pg.locator("a.md-select__link").evaluate_all("ls => ls.map(a => a.href)")))
    assert links == {lang: url if lang == PROJECT.default_language else f"{url}{lang}/" for lang in LANGUAGES}
    home = pg.locator("article a").first.evaluate("a => a.href")
    assert home == (url if language == PROJECT.default_language else f"{url}{language}/")
    context.close()


FIXTURE_SITE = ROOT / "hooks" / "mkdocs-po-i18n" / "example" / "mkdocs.yml"


@pytest.fixture(scope="module")
def fixture_server(tmp_path_factory):
    """The second site (hooks/mkdocs-po-i18n/example/), whose headings have no explicit ids."""
    _require_chromium()
    with serve_built_site(tmp_path_factory.mktemp("served-fixture"), "/widgets/", config=FIXTURE_SITE) as site_url:
        yield site_url


def test_language_switch_keeps_a_section_whose_heading_has_no_id(fixture_server, browser):
    """``## Check the installation`` has no ``{ #id }``: the pseudo-locale's translated
    heading carries the English id, so the switch lands on the same section."""
    context = browser.new_context()
    pg = context.new_page()
    pg.goto(f"{fixture_server}guide/install/#check-the-installation")
    pg.locator("a.md-select__link[hreflang=fr]").first.dispatch_event("click")
    pg.wait_for_url(re.compile(re.escape(f"{fixture_server}fr/guide/install/") + "#check-the-installation$"))
    heading = pg.locator("h2#check-the-installation")
    assert heading.count() == 1
    assert "Chéçк тhé íñšтálláтíóñ" in heading.inner_text()  # its own slug would be chec-he-insallaion
    context.close()


# What the dark-scheme test reads: each element's text colour and the background colours
# from it up to the first opaque one (getComputedStyle, sRGB "rgb()"/"rgba()" strings).
_COLOURS_JS = """(selector) => Array.from(document.querySelectorAll(selector)).slice(0, 3).map((el) => {
  const backgrounds = [];
  for (let node = el; node; node = node.parentElement) {
    const bg = getComputedStyle(node).backgroundColor;
    backgrounds.push(bg);
    if (/^rgb\\(/.test(bg)) break;
  }
  return {text: el.textContent.trim().slice(0, 60), color: getComputedStyle(el).color, backgrounds};
})"""


def _rgba(css: str) -> tuple[float, float, float, float]:
    """An ``rgb(r, g, b)`` or ``rgba(r, g, b, a)`` string of getComputedStyle as 0-255 channels and alpha."""
    numbers = [float(n) for n in re.findall(r"[\d.]+", css)]
    assert css.startswith("rgb") and len(numbers) in (3, 4), f"unexpected computed colour {css!r}"
    return (*numbers[:3], numbers[3] if len(numbers) == 4 else 1.0)


def _over(top: tuple, bottom: tuple) -> tuple:
    """``top`` composited over an opaque ``bottom`` (source-over, sRGB channels)."""
    alpha = top[3]
    return tuple(top[i] * alpha + bottom[i] * (1 - alpha) for i in range(3)) + (1.0,)


def _luminance(rgb: tuple) -> float:
    """Relative luminance of an sRGB colour, WCAG 2.x's formula
    (https://www.w3.org/TR/WCAG21/#dfn-relative-luminance); channels 0-255."""
    def linear(channel: float) -> float:
        c = channel / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (linear(c) for c in rgb[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(color: str, backgrounds: list[str]) -> float:
    """WCAG 2.x contrast ratio (https://www.w3.org/TR/WCAG21/#dfn-contrast-ratio), 1 to 21,
    of a text colour over the stack of backgrounds under it (innermost first, as
    ``_COLOURS_JS`` lists them; white below the last if none is opaque)."""
    ground = (255.0, 255.0, 255.0, 1.0)
    for layer in reversed(backgrounds):
        ground = _over(_rgba(layer), ground)
    text = _over(_rgba(color), ground)
    light, dark = sorted((_luminance(text), _luminance(ground)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


# The course's own colours on a lesson: badges, the verified output, a quick check after a
# wrong answer. Each selector must match on the page.
DARK_CHECKED = ("a.course-badge", "details.course-output > summary", "details.course-output .course-output__rank",
                "details.course-output > p:not(.course-output__rank)", "details.quiz > summary",
                "form.course-quiz label.course-quiz__right", "form.course-quiz label.course-quiz__wrong",
                ".course-quiz__feedback[data-result=wrong]")


# Material's colour scheme for the reader's system setting (mkdocs.yml theme.palette).
SCHEMES = {"dark": "slate", "light": "default"}


@pytest.mark.parametrize("preference", SCHEMES)
@pytest.mark.parametrize("language, lesson, badge", [("en", LESSON, "verified"), ("ja", LESSON, "verified"),
                                                     ("en", "syncbn-and-sharding", "awaiting")])
def test_the_system_colour_scheme_is_followed_and_course_colours_are_readable_in_it(server, browser, preference,
                                                                                      language, lesson, badge):
    """A reader whose system prefers dark gets Material's slate scheme, and the course's
    own colours (badges, verified output, quick check) have WCAG AA contrast in it, as in
    the light one."""
    context = browser.new_context(color_scheme=preference)
    try:
        pg = context.new_page()
        _open(pg, _url(server, language, lesson))
        assert pg.evaluate("document.body.dataset.mdColorScheme") == SCHEMES[preference]
        quiz = pg.locator("details.quiz").first
        quiz.locator("summary").click()
        right = quiz.locator("input[type=radio][data-right=true]").first.evaluate("r => r.value")
        quiz.locator(f"input[type=radio]:not([value='{right}'])").first.check()
        quiz.locator("button[type=submit]").click()
        pg.locator("details.course-output").first.evaluate("d => { d.open = true; }")
        checked = (*DARK_CHECKED, f"a.course-badge--{badge}")
        for selector in checked:
            found = pg.evaluate(_COLOURS_JS, selector)
            assert found, f"{selector}: nothing on {language}/{lesson}"
            for element in found:
                ratio = contrast_ratio(element["color"], element["backgrounds"])
                assert ratio >= 4.5, f"{language}/{lesson} {selector} {element}: contrast {ratio:.2f}:1 < 4.5:1 (WCAG AA)"
    finally:
        context.close()
