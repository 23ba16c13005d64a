"""The built site: a tree per published language, translated pages, identical code, working switcher."""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from urllib.parse import urljoin, urlparse

import polib
import pytest
from bs4 import BeautifulSoup, NavigableString, SoupStrainer

from conftest import LANGUAGES, ROOT, TRANSLATIONS, copy_project, snippet_section
from site_server import MKDOCS, MKDOCS_ENV, shared_build
from coursekit.page_scripts import CLASS_SWAP, LOADER, LOADER_MARK
from theme_strings import LICENCES
from po_i18n.project import Project
from po_i18n.segment import segment

pytestmark = pytest.mark.site

PROJECT = Project.load(ROOT / "mkdocs.yml")
PAGES = [p.with_suffix("").as_posix() for p in PROJECT.pages()]
# Pages that show code from snippets/: the lessons.
LESSONS = [p for p in PAGES if "--8<--" in (PROJECT.docs_dir / f"{p}.md").read_text(encoding="utf-8")]


def page_path(site: Path, language: str, page: str) -> Path:
    base = site if language == PROJECT.default_language else site / language
    return base / "index.html" if page == "index" else base / page / "index.html"


def soup_of(site: Path, language: str, page: str) -> BeautifulSoup:
    return BeautifulSoup(page_path(site, language, page).read_text(encoding="utf-8"), "html.parser")


HOST = "https://example.org/torch-distributed-course/"  # a SITE_URL with a sub-path


@pytest.fixture(scope="module")
def default_build(tmp_path_factory) -> tuple[Path, str]:
    """The site as ``make site`` builds it (no ``SITE_URL``), once a session, and its log."""
    return shared_build(tmp_path_factory)


@pytest.fixture(scope="module")
def site(default_build) -> Path:
    return default_build[0]


@pytest.fixture(scope="module")
def parsed_pages(site) -> dict[Path, BeautifulSoup]:
    """Every HTML file of the default build, parsed once for the tests that read them all."""
    return {path: BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser") for path in sorted(site.rglob("*.html"))}


@pytest.fixture(scope="module")
def hosted_build(tmp_path_factory) -> tuple[Path, str]:
    """The site built for a host: ``SITE_URL=https://example.org/torch-distributed-course/``."""
    return shared_build(tmp_path_factory, SITE_URL=HOST)


@pytest.fixture(scope="module")
def hosted_site(hosted_build) -> Path:
    return hosted_build[0]


def code_blocks(soup: BeautifulSoup) -> list[str]:
    """The text of every highlighted code block of the article (the verified output
    under launch commands is not code: see the output test)."""
    blocks = []
    for block in soup.select("article div.highlight"):
        if block.find_parent("details", class_="course-output"):
            continue
        blocks.append(block.select_one("pre code").get_text().rstrip("\n"))
    return blocks


def test_every_language_has_its_own_tree_of_every_page(site):
    for language in LANGUAGES:
        for page in PAGES:
            assert page_path(site, language, page).is_file(), (language, page)


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("page", PAGES)
def test_pages_carry_their_language_and_translated_title(site, language, page):
    soup = soup_of(site, language, page)
    assert soup.html["lang"] == language
    english_title = segment((PROJECT.docs_dir / f"{page}.md").read_text(encoding="utf-8"), PROJECT.engine)[0].msgid
    if language == PROJECT.default_language:
        expected = english_title
    else:
        expected = polib.pofile(str(PROJECT.catalog_path(language, f"{page}.md"))).find(english_title).msgstr
        assert expected and expected != english_title
    h1 = soup.select_one("article h1")
    assert h1.get_text().rstrip("¶").strip() == expected
    if page == "index":  # Material titles the home page with the site name alone
        site_name = PROJECT.config["site_name"]
        if language != PROJECT.default_language:
            site_name = polib.pofile(str(PROJECT.site_catalog_path(language))).find(site_name).msgstr
        assert soup.title.get_text() in (site_name, f"{expected} - {site_name}")
    else:
        assert soup.title.get_text().startswith(expected)


def test_material_interface_is_localized(site):
    placeholders = {lang: soup_of(site, lang, "index").select_one("input.md-search__input")["placeholder"] for lang in LANGUAGES}
    assert len(set(placeholders.values())) == len(LANGUAGES), placeholders


# Names that stay as they are in every language: the theme named in the footer's credit,
# the licences named in its licence line, and each program's file name (the title of its
# page, hooks/program_pages.py).
NAMES = ({"Material for MkDocs"} | {name for name, _ in LICENCES.values()}
         | {p.name for p in (ROOT / "snippets").glob("*/*") if p.suffix in (".py", ".sbatch")})
_LABELS = ("title", "aria-label", "placeholder", "alt")


def _interface_strings(soup: BeautifulSoup, language: str) -> set[str]:
    """What the theme, the extensions and the hooks write around a page's content: every
    text outside the article and every tooltip or label anywhere (the article's text is
    content, checked against the catalogs elsewhere), without code and without text
    marked as another language (English fallback spans, the language selector's names)."""
    clone = BeautifulSoup(str(soup), "html.parser")
    for el in clone.select("code, pre, kbd, samp, script, style, svg"):
        el.decompose()
    for el in clone.find_all(lang=True):
        if el.name != "html" and not el.decomposed and el["lang"] != language:
            el.decompose()
    found = set()
    for el in clone.find_all(True):
        found.update(el[attr] for attr in _LABELS if el.get(attr))
        if el.name == "meta" and el.get("name") == "description":
            found.add(el["content"])
    for article in clone.select("article"):
        article.decompose()
    found.update(t for t in clone.find_all(string=True) if type(t) is NavigableString)  # no doctype, no comments
    found = {" ".join(text.split()) for text in found}
    return {text for text in found if re.search(r"[A-Za-z]{2}", text)}


def _material_strings(language: str) -> set[str]:
    """Material's own interface strings in a language (its ``partials/languages/<lang>.html``)."""
    import material

    source = (Path(material.__file__).parent / "templates" / "partials" / "languages" / f"{language}.html").read_text(encoding="utf-8")
    pairs = re.findall(r'^\s*"([\w.]+)": "(.*)",?$', source, re.M)
    return {value for key, value in pairs if key != "language" and not key.startswith("search.config.") and value}


def _translations(language: str) -> set[str]:
    """Every interface string a language's translators gave (Material's, ``_site.po`` and
    ``_course.po``): one may equal the English word (Swedish "Navigation") and still be a
    translation."""
    given = set()
    for path in PROJECT.interface_catalogs(language):
        catalog = polib.pofile(str(path))
        given |= {e.msgstr for e in catalog if e.msgstr} | {v for e in catalog for v in e.msgstr_plural.values() if v}
    return _material_strings(language) | given


def test_no_english_interface_string_in_a_translated_page(site, parsed_pages):
    """Permalink titles, footer, header, search, 404 pages: every interface string the
    English site shows, Material's and the hooks' English strings, none of them may be
    left in English on a translated page."""
    english = _material_strings("en") | {s.msgid for strings in PROJECT.interface_strings.values() for s in strings
                                         if "%(" not in s.msgid}
    for path, soup in parsed_pages.items():  # _interface_strings reads a copy
        if path.relative_to(site).parts[0] not in PROJECT.languages:
            english |= _interface_strings(soup, "en")
    found = []
    for language in TRANSLATIONS:
        for path in sorted((site / language).rglob("*.html")):
            left = (_interface_strings(parsed_pages[path], language) & english) - NAMES - _translations(language)
            found += [f"{path.relative_to(site)}: {text!r}" for text in sorted(left)]
    assert not found, "English interface strings in translated pages:\n" + "\n".join(found)


@pytest.mark.parametrize("page", LESSONS)
def test_code_blocks_are_identical_in_every_language_and_equal_the_snippet_sections(site, page):
    source = (PROJECT.docs_dir / f"{page}.md").read_text(encoding="utf-8")
    includes = re.findall(r'^--8<-- "([^":]+)(?::([\w-]+))?"$', source, re.M)  # a section, or a whole file
    expected = [snippet_section(ROOT / "snippets" / path, name) if name
                else (ROOT / "snippets" / path).read_text(encoding="utf-8").rstrip("\n") for path, name in includes]
    assert expected and all(expected)
    for language in LANGUAGES:
        assert code_blocks(soup_of(site, language, page)) == expected, language


@pytest.mark.parametrize("page", LESSONS)
def test_language_switcher_links_to_the_same_lesson(site, page):
    for language in LANGUAGES:
        soup = soup_of(site, language, page)
        links = {a["hreflang"]: a["href"] for a in soup.select("a.md-select__link[hreflang]")}
        assert set(links) == set(LANGUAGES), links
        # each entry names its language in that language, and says so to screen readers
        assert all(a.get("lang") == a["hreflang"] for a in soup.select("a.md-select__link[hreflang]"))
        here = page_path(site, language, page)
        for target_language, href in links.items():
            resolved = urlparse(urljoin(here.as_uri(), href)).path
            if resolved.endswith("/"):
                resolved += "index.html"
            assert Path(resolved) == page_path(site, target_language, page), (language, href)


def _prose(tag) -> str:
    """An element's text without its inline code (identical in every language by design)."""
    clone = BeautifulSoup(str(tag), "html.parser")
    for code in clone.find_all("code"):
        code.decompose()
    return clone.get_text(" ", strip=True)


def _english_texts(soup: BeautifulSoup) -> set[str]:
    """Prose blocks of a page with at least three Latin words outside inline code."""
    return {
        t.get_text(" ", strip=True)
        for t in soup.select("article p, article li, article td, article th, article summary, article h2")
        if len(re.findall(r"[A-Za-z]{3,}", _prose(t))) >= 3 and t.find_parent(class_="highlight") is None
    }


@pytest.mark.parametrize("language", TRANSLATIONS)
def test_fully_translated_pages_contain_no_english_paragraph(site, language):
    for page in PAGES:
        catalog = polib.pofile(str(PROJECT.catalog_path(language, f"{page}.md")))
        if catalog.percent_translated() < 100 or catalog.fuzzy_entries():
            continue
        english = _english_texts(soup_of(site, PROJECT.default_language, page))
        translated = _english_texts(soup_of(site, language, page)) | {
            t.get_text(" ", strip=True) for t in soup_of(site, language, page).select("article p, article li")
        }
        assert english and not (english & translated), (language, page, english & translated)


def test_a_missing_translation_falls_back_to_english_with_a_warning(tmp_path):
    copy_project(tmp_path)
    language = TRANSLATIONS[0]
    catalog_file = tmp_path / "i18n" / language / "ddp-basics.po"
    catalog = polib.pofile(str(catalog_file))
    entry = next(e for e in catalog if e.comment == "paragraph")
    entry.msgstr = ""
    catalog.save(str(catalog_file))
    # a page that says some sentences twice: the warning counts each message once, as its catalog holds it
    repeating = polib.pofile(str(tmp_path / "i18n" / language / "torchrun-launching.po"))
    next(e for e in repeating if e.comment == "paragraph").msgstr = ""
    repeating.save()
    (tmp_path / "i18n" / language / "index.po").unlink()
    proc = subprocess.run([*MKDOCS, "build", "--no-strict"], cwd=tmp_path, capture_output=True, text=True, env=MKDOCS_ENV)
    assert proc.returncode == 0, proc.stderr
    for page, its_catalog in (("ddp-basics", catalog), ("torchrun-launching", repeating)):
        counted = re.search(rf"WARNING .*{page}\.md: 1 of (\d+) messages are untranslated or fuzzy in '{language}'", proc.stderr)
        assert counted, proc.stderr
        assert int(counted.group(1)) == len([e for e in its_catalog if not e.obsolete]), page  # as po-i18n stats counts
    assert re.search(rf"WARNING .*i18n/{language}/index\.po: no catalog, so docs/index\.md is shown in English", proc.stderr), proc.stderr
    html = (tmp_path / "site" / language / "ddp-basics" / "index.html").read_text(encoding="utf-8")
    english_start = entry.msgid.split("`")[0][:40]
    assert english_start in html
    soup = BeautifulSoup(html, "html.parser")
    assert soup.html["lang"] == language
    fallback = [s for s in soup.select('article span[lang="en"]') if s.get_text().startswith(english_start)]
    assert len(fallback) == 1, "the English paragraph must carry lang=en for screen readers"
    assert len(soup.select('article span[lang="en"]')) == 1  # the translated ones carry none
    home = BeautifulSoup((tmp_path / "site" / language / "index.html").read_text(encoding="utf-8"), "html.parser")
    assert home.select_one("article p.course-notice").a["href"] == "../"  # the whole page is in English: 0 %
    paragraphs = home.select("article > p:not(.course-notice)")
    assert paragraphs
    for paragraph in paragraphs:
        assert paragraph.select_one('span[lang="en"]'), paragraph
    strict = subprocess.run([*MKDOCS, "build", "--strict"], cwd=tmp_path, capture_output=True, text=True, env=MKDOCS_ENV)
    assert strict.returncode != 0


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_hosted_build_gives_every_page_canonical_and_absolute_hreflang_alternates(hosted_site, language):
    for page in PAGES:
        soup = soup_of(hosted_site, language, page)
        path = "" if page == "index" else f"{page}/"
        prefix = "" if language == PROJECT.default_language else f"{language}/"
        assert soup.select_one('link[rel="canonical"]')["href"] == f"{HOST}{prefix}{path}"
        alternates = {a["hreflang"]: a["href"] for a in soup.select('link[rel="alternate"][hreflang]')}
        expected = {lang: f"{HOST}{'' if lang == PROJECT.default_language else lang + '/'}{path}" for lang in LANGUAGES}
        expected["x-default"] = expected[PROJECT.default_language]
        assert alternates == expected, (language, page)


def test_a_hosted_build_has_a_sitemap_of_every_language_with_alternates(hosted_site):
    import xml.etree.ElementTree as ET

    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9", "x": "http://www.w3.org/1999/xhtml"}
    tree = ET.parse(hosted_site / "sitemap.xml")
    urls = {u.find("s:loc", ns).text: {x.get("hreflang") for x in u.findall("x:link", ns)} for u in tree.findall("s:url", ns)}
    for language in LANGUAGES:
        for page in PAGES:
            loc = f"{HOST}{'' if language == PROJECT.default_language else language + '/'}{'' if page == 'index' else page + '/'}"
            assert loc in urls, loc
            assert set(LANGUAGES) <= urls[loc], loc


def test_a_hosted_build_answers_materials_sitemap_requests_with_valid_small_maps(hosted_site):
    """Material fetches ``sitemap.xml`` next to every hreflang alternate on each page load
    and parses it on the main thread. Each such file exists and, being below the root,
    lists only URLs below its own folder (sitemaps.org, "Sitemap file location"): a copy
    of the root map there was invalid and cost every page load six 21 KB parses."""
    import xml.etree.ElementTree as ET

    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    for language in LANGUAGES:
        for page in PAGES:
            soup = soup_of(hosted_site, language, page)
            for link in soup.select('link[rel="alternate"][hreflang]'):
                folder = link["href"]
                if folder == HOST:
                    continue  # the root map, checked above
                path = hosted_site / folder.removeprefix(HOST) / "sitemap.xml"
                assert path.is_file(), (language, page, folder)
                locs = [loc.text for loc in ET.parse(path).getroot().findall("s:url/s:loc", ns)]
                assert all(loc.startswith(folder) for loc in locs), (path, locs[:3])


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_default_build_has_no_absolute_only_metadata(site, language):
    """No canonical link or hreflang alternate (only absolute URLs are valid there, and
    the address is unknown), and an empty site map where Material fetches one."""
    import xml.etree.ElementTree as ET

    for page in PAGES:
        soup = soup_of(site, language, page)
        assert soup.select_one('link[rel="canonical"]') is None, (language, page)
        assert not soup.select('link[rel="alternate"][hreflang]'), (language, page)
    root = site if language == PROJECT.default_language else site / language
    assert list(ET.parse(root / "sitemap.xml").getroot()) == []


def test_only_a_default_build_says_what_site_url_would_add(default_build, hosted_build):
    line = "set SITE_URL=https://host/path/ to add canonical links, hreflang alternates and a site map"
    assert default_build[1].count(line) == 1, default_build[1]
    assert line not in hosted_build[1]


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_default_build_links_only_relatively_within_the_site(site, language):
    """Every link, stylesheet and script of every page (404 pages too) is relative, so
    the site works under any host and sub-path."""
    root = site if language == PROJECT.default_language else site / language
    files = [page_path(site, language, page) for page in PAGES] + [root / "404.html"]
    for path in files:
        soup = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
        for el in soup.find_all(["a", "link", "script", "img"]):
            for attr in ("href", "src", "data-course-href", "data-course-src"):
                url = el.get(attr)
                if url is None or url.startswith(("#", "https://squidfunk.github.io/")):  # the footer credit
                    continue
                if el.name == "a" and urlparse(url).scheme == "https" and "example.org" not in urlparse(url).netloc:
                    continue  # a link to another site (a PyTorch pull request), not into this one
                assert not urlparse(url).scheme and not url.startswith("/"), (path.relative_to(site), attr, url)


@pytest.mark.parametrize("language", LANGUAGES)
def test_each_language_has_its_own_404_page(site, language):
    path = site / "404.html" if language == PROJECT.default_language else site / language / "404.html"
    soup = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
    assert soup.html["lang"] == language
    title = "Page not found"
    if language != PROJECT.default_language:
        title = polib.pofile(str(PROJECT.interface_catalog_path(language, "course"))).find(title).msgstr
        assert title and title != "Page not found"
    assert soup.select_one("article h1").get_text().strip() == title


@pytest.mark.parametrize("language", LANGUAGES)
def test_each_language_has_its_own_search_index(site, language):
    import json

    root = site if language == PROJECT.default_language else site / language
    index = json.loads((root / "search" / "search_index.json").read_text(encoding="utf-8"))
    assert index["config"]["lang"] == [language]
    locations = [d["location"] for d in index["docs"]]
    assert any(loc.startswith("ddp-basics/") for loc in locations)
    assert not any(loc.split("/", 1)[0] in PROJECT.languages for loc in locations)  # no other language's pages
    titles = {d["title"] for d in index["docs"] if d["location"] == "ddp-basics/"}
    heading = soup_of(site, language, "ddp-basics").select_one("article h1").get_text().rstrip("¶").strip()
    assert titles == {heading}


def test_no_page_loads_anything_from_another_host(parsed_pages):
    for path, soup in parsed_pages.items():
        for tag, attr in (("script", "src"), ("link", "href"), ("img", "src"), ("iframe", "src")):
            for el in soup.find_all(tag):
                url = el.get(attr, "")
                if tag == "link" and ("alternate" in el.get("rel", []) or "canonical" in el.get("rel", [])):
                    continue
                assert not re.match(r"^(https?:)?//", url), (path, url)


@pytest.mark.parametrize("build", ["default", "hosted"])
def test_no_script_holds_up_the_first_paint(request, build):
    """No page loads a script file by itself: each is a ``data-course-src`` that the page's
    one loader (coursekit.page_scripts) appends after the first paint, and it runs nothing
    where it stands; Material's no-js/js swap is made in the head, before any stylesheet,
    so that Material's own swap does not restyle the whole page. In both builds (their 404
    pages come from different hooks). (That the scripts then run is the browser tests' part.)"""
    site = request.getfixturevalue("site" if build == "default" else "hosted_site")
    # the hosted build's pages: only what this test reads (the head, every script and stylesheet link)
    pages = request.getfixturevalue("parsed_pages") if build == "default" else {
        path: BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser", parse_only=SoupStrainer(["head", "script", "link"]))
        for path in sorted(site.rglob("*.html"))}
    later = 0
    for path, soup in pages.items():
        where = f"{build}: {path.relative_to(site).as_posix()}"
        assert soup.find_all("script", src=True) == [], where
        tags = soup.find_all("script", attrs={"data-course-src": True})
        assert tags and all(not el.string for el in tags), where
        assert tags[-1]["data-course-src"].rsplit("/", 1)[-1] == "course.js", where
        loaders = soup.find_all("script", attrs={LOADER_MARK: True})
        assert [el.string for el in loaders] == [LOADER], where  # one loader, and no other appends scripts
        assert [el for el in soup.find_all("script") if 'createElement("script")' in (el.string or "")] == loaders
        swaps = soup.find_all(lambda el: el.name == "script" and str(el) == CLASS_SWAP)
        assert len(swaps) == 1 and swaps[0].parent.name == "head", where
        assert not swaps[0].find_all_previous("link", rel="stylesheet"), where
        later += len(tags)
    assert later >= 2 * len(LANGUAGES) * len(PAGES)  # Material's bundle and course.js on every page


@pytest.mark.parametrize("language", TRANSLATIONS)
def test_a_404_page_offers_every_languages_home_and_no_alternates(site, hosted_site, language):
    for built, root in ((hosted_site, "/torch-distributed-course/"), (site, None)):
        soup = BeautifulSoup((built / language / "404.html").read_text(encoding="utf-8"), "html.parser")
        assert not soup.select('link[rel="alternate"][hreflang]')
        links = {a["hreflang"]: a["href"] for a in soup.select("a.md-select__link[hreflang]")}
        if root is not None:  # absolute paths: a 404 page shows at any address
            assert links == {lang: root if lang == PROJECT.default_language else f"{root}{lang}/" for lang in LANGUAGES}
        else:  # relative to the page's own folder, which its script makes the base URL
            assert links == {lang: "../" if lang == PROJECT.default_language else ("./" if lang == language else f"../{lang}/")
                             for lang in LANGUAGES}
        assert all(a.get("lang") == a["hreflang"] for a in soup.select("a.md-select__link[hreflang]"))
        assert soup.select_one('div.md-search[role="dialog"][aria-label]') is not None


def test_the_shared_template_cache_changes_no_byte_of_the_site(site, tmp_path):
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "hooks/template_cache.py" in config
    plain = ROOT / f".mkdocs-no-template-cache-{os.getpid()}.yml"  # beside mkdocs.yml: !relative paths
    plain.write_text("\n".join(l for l in config.splitlines() if "hooks/template_cache.py" not in l) + "\n",
                     encoding="utf-8")
    try:
        out = tmp_path / "site"
        proc = subprocess.run([*MKDOCS, "build", "--strict", "-f", str(plain), "--site-dir", str(out)],
                              cwd=ROOT, capture_output=True, text=True, env=MKDOCS_ENV)
    finally:
        plain.unlink()
    assert proc.returncode == 0, proc.stderr
    built = sorted(p.relative_to(site) for p in site.rglob("*") if p.is_file())
    assert built == sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    different = [p for p in built if (site / p).read_bytes() != (out / p).read_bytes()]
    assert different == []


def _launch_blocks(soup: BeautifulSoup) -> list:
    """The article's launch command blocks (a highlighted block whose text starts a job)."""
    return [b for b in soup.select("article div.highlight")
            if not b.find_parent("details") and re.search(r"(^|\s)(torchrun|sbatch) ", b.get_text())]


@pytest.mark.parametrize("page", LESSONS)
def test_under_each_launch_command_the_verified_run_s_output_per_rank(site, page):
    """The output shown is the record's, for the program's current content, in every language."""
    from dataclasses import asdict

    from coursekit.verification import load_records

    records = {program: {rec.environment: asdict(rec) for rec in envs.values() if rec.platform == "cpu-x86_64-torch2.13.0"}
               for program, envs in load_records(ROOT / "snippets").items()}
    source = (PROJECT.docs_dir / f"{page}.md").read_text(encoding="utf-8")
    programs = re.findall(r'^--8<-- "([^":]+):launch"$', source, re.M)
    assert programs, page
    for language in LANGUAGES:
        soup = soup_of(site, language, page)
        outputs = soup.select("article details.course-output")
        shown = [p for p in programs if any(r.get("output") for r in records.get(p, {}).values())]
        assert len(outputs) == len(shown), (language, page)
        for program, details in zip(shown, outputs):
            record = records[program].get("cpu-gloo") or records[program]["cuda-nccl"]
            assert "torch " + record["torch"] in details.summary.get_text()
            labels = details.select(":scope > p.course-output__rank")
            assert len(labels) == len(record["output"]), (language, program)
            assert not details.select(".tabbed-set"), "ranks are stacked, not tabbed (gate.verified_output)"
            for label, lines in zip(labels, record["output"].values()):
                after = label.find_next_sibling()
                code = after.select_one("pre code") if "highlight" in after.get("class", []) else None
                assert (code.get_text().rstrip("\n").split("\n") if code else []) == lines, (language, program)
        if language != PROJECT.default_language:
            english = soup_of(site, PROJECT.default_language, page).select("article details.course-output")
            assert [d.summary.get_text() for d in outputs] != [d.summary.get_text() for d in english], language


# --- the page of each whole program (hooks/program_pages.py, coursekit.programs) ---

def _program_of_page(site: Path, path: Path) -> str:
    """``ddp_basics/train.py`` for ``<site>/[<lang>/]programs/ddp_basics/train/index.html``."""
    lesson, stem = path.parent.relative_to(site).parts[-2:]
    return f"{lesson}/{stem}.py"


def _program_pages(site: Path, language: str) -> list[Path]:
    base = site if language == PROJECT.default_language else site / language
    return sorted(base.glob("programs/*/*/index.html"))


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_code_block_title_leads_to_its_whole_program_in_the_same_language(site, parsed_pages, language):
    from coursekit.programs import program

    for lesson in LESSONS:
        path = page_path(site, language, lesson)
        titles = parsed_pages[path].select("article .highlight span.filename")
        assert titles, f"{language}/{lesson}: no code block title"
        for title in titles:
            link = title.find("a", class_="course-program-link")
            assert link is not None, f"{language}/{lesson}: block title {title.get_text()!r} leads nowhere"
            target = (path.parent / link["href"]).resolve() / "index.html"
            base = site if language == PROJECT.default_language else site / language
            assert target.is_file() and target.is_relative_to(base / "programs"), (
                f"{language}/{lesson}: {title.get_text()!r} links to {link['href']}, not to a program page of {language}")
            prog = program(_program_of_page(site, target), ROOT / "snippets")
            assert title.get_text() in [Path(f).name for f in prog.files], (
                f"{language}/{lesson}: block {title.get_text()!r} links to the page of {prog.name}")


@pytest.mark.parametrize("language", LANGUAGES)
def test_each_program_page_offers_its_files_byte_for_byte_as_verified_with_its_command(site, parsed_pages, language):
    import hashlib
    import io
    import zipfile

    from coursekit.programs import program
    from coursekit.runspec import read_spec
    from coursekit.verification import load_records, status

    snippets = ROOT / "snippets"
    records = load_records(snippets)
    pages = _program_pages(site, language)
    assert len(pages) >= len(LESSONS), f"{language}: {len(pages)} program pages"
    for path in pages:
        name = _program_of_page(site, path)
        prog, soup = program(name, snippets), parsed_pages[path]
        verified = {rec.files.get(f) for rec in status(name, snippets, records).current.values() for f in prog.files} or {None}
        offered = {}
        for link in soup.select("article a.course-download[download]"):
            data = (path.parent / link["href"]).resolve().read_bytes()
            if link["download"].endswith(".zip"):
                with zipfile.ZipFile(io.BytesIO(data)) as archive:
                    folder = Path(name).stem
                    assert sorted(archive.namelist()) == sorted(f"{folder}/{Path(f).name}" for f in prog.files), name
                    for f in prog.files:
                        assert archive.read(f"{folder}/{Path(f).name}") == (snippets / f).read_bytes(), f"{name}: {f} in the zip"
                continue
            digest = hashlib.sha256(data).hexdigest()
            shown = link.find_next("code", class_="course-digest")
            assert shown is not None and shown.get_text() == digest, f"{language} {name}: {link['download']} shows another SHA-256"
            if verified != {None}:  # a program awaiting its GPU run has no current record, and says so
                assert digest in verified, f"{language} {name}: {link['download']} is not the file a current record verified"
            else:
                assert soup.select("article a.course-badge--awaiting"), f"{language} {name}: no record, no awaiting badge"
            offered[link["download"]] = data
        assert offered == {Path(f).name: (snippets / f).read_bytes() for f in prog.files}, f"{language} {name}: downloads"
        if len(prog.files) > 1:
            assert soup.select_one('article a.course-download[download$=".zip"]') is not None, f"{name}: no zip"
        command = soup.select_one("article .language-bash code").get_text().strip()
        assert command == "\n".join(line.text for line in read_spec(snippets / name).lines), f"{language} {name}: command"
        listing = [block for block in soup.select("article .highlight") if block.select_one("span.filename")]
        assert [b.select_one("span.filename").get_text() for b in listing] == [Path(f).name for f in prog.files], name
        assert soup.select("article a.course-badge--verified, article a.course-badge--awaiting"), f"{language} {name}: no badge"


def test_a_program_pages_language_selector_leads_to_the_same_program(site, parsed_pages):
    for language in LANGUAGES:
        for path in _program_pages(site, language)[:3]:
            links = {a["hreflang"]: (path.parent / a["href"]).resolve()
                     for a in parsed_pages[path].select("a.md-select__link")}
            name = _program_of_page(site, path)
            assert links == {lang: page_path(site, lang, f"programs/{name[:-3]}").parent for lang in LANGUAGES}, (
                f"{language} {name}: selector {links}")
