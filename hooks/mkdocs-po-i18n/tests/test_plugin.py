"""The plugin on a new two-page site, as an adopter meets it: a configuration it cannot work
with stops the build with one line; its options do what the README says."""
from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import polib
import pytest

from example_site import MKDOCS, MKDOCS_ENV

pytestmark = pytest.mark.site

PAGES = {
    "index.md": "# Welcome\n\nThis site documents widgets.\n\n## Usage\n\nCall `widget()` once.\n",
    "guide.md": "# Guide\n\n!!! note\n    Widgets are small.\n\n| Name | Use |\n| --- | --- |\n| knob | turning |\n",
}


def _site(root: Path, plugin: str = "  - po-i18n\n", extensions: str = "  - admonition\n  - attr_list\n  - tables\n") -> Path:
    (root / "docs").mkdir(parents=True)
    for name, text in PAGES.items():
        (root / "docs" / name).write_text(text, encoding="utf-8")
    (root / "mkdocs.yml").write_text(textwrap.dedent("""\
        site_name: Widgets
        plugins:
          - i18n:
              docs_structure: suffix
              languages:
                - locale: en
                  name: English
                  default: true
                - locale: fr
                  name: Français
        """) + plugin + "markdown_extensions:\n" + extensions, encoding="utf-8")
    return root


def _run(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=root, capture_output=True, text=True, env=MKDOCS_ENV)


def _translate(root: Path) -> None:
    assert _run(root, sys.executable, "-m", "po_i18n", "update").returncode == 0
    for path in (root / "i18n" / "fr").glob("*.po"):
        text = path.read_text(encoding="utf-8")
        for english, french in (("Welcome", "Bienvenue"), ("Usage", "Utilisation"), ("Guide", "Guide"),
                                ("This site documents widgets.", "Ce site documente les widgets."),
                                ("Call `widget()` once.", "Appelez `widget()` une fois."),
                                ("Widgets are small.", "Les widgets sont petits."), ("Name", "Nom"),
                                ("Use", "Usage"), ("knob", "bouton"), ("turning", "tourner"), ("Note", "Remarque"),
                                ("Widgets", "Widgets"), ("Permanent link", "Lien permanent")):
            text = text.replace(f'msgid "{english}"\nmsgstr ""', f'msgid "{english}"\nmsgstr "{french}"')
        path.write_text(text, encoding="utf-8")
    site = polib.pofile(str(root / "i18n" / "fr" / "_site.po"))  # the plugin's own strings: kept as they are
    for entry in site:
        if entry.msgid_plural:
            entry.msgstr_plural = {i: entry.msgstr_plural.get(i) or entry.msgid_plural for i in entry.msgstr_plural}
        elif not entry.msgstr:
            entry.msgstr = entry.msgid
    site.save()


def test_without_attr_list_the_build_stops_with_one_line_saying_what_to_add(tmp_path):
    root = _site(tmp_path, extensions="  - admonition\n  - tables\n")
    proc = _run(root, *MKDOCS, "build", "--strict")
    assert proc.returncode == 1
    errors = [line for line in proc.stderr.splitlines() if line.startswith("ERROR")]
    assert errors == ["ERROR   -  po-i18n: translated headings keep their English anchors as '{ #id }' attribute lists, "
                      "which need the attr_list extension: add '- attr_list' under markdown_extensions in mkdocs.yml"]
    assert "Traceback" not in proc.stderr


def test_without_mkdocs_static_i18n_the_build_stops_with_one_line(tmp_path):
    root = _site(tmp_path)
    config = root / "mkdocs.yml"
    text = config.read_text(encoding="utf-8")
    config.write_text(text[:text.index("  - i18n:")] + "  - po-i18n\n" + text[text.index("markdown_extensions"):],
                      encoding="utf-8")
    proc = _run(root, *MKDOCS, "build", "--strict")
    assert proc.returncode == 1
    assert "po-i18n: needs the mkdocs-static-i18n plugin" in proc.stderr and "Traceback" not in proc.stderr


def test_a_translated_site_builds_strict_with_english_anchors_and_no_status_page(tmp_path):
    root = _site(tmp_path)
    _translate(root)
    proc = _run(root, *MKDOCS, "build", "--strict")
    assert proc.returncode == 0, proc.stderr
    page = (root / "site" / "fr" / "index.html").read_text(encoding="utf-8")
    assert "Ce site documente les widgets." in page and 'id="usage"' in page and ">Utilisation<" in page
    guide = (root / "site" / "fr" / "guide" / "index.html").read_text(encoding="utf-8")
    assert "Remarque" in guide and "Les widgets sont petits." in guide and "bouton" in guide
    assert not list((root / "site").rglob("translation-status*"))  # off unless status_page names it


def test_untranslated_messages_fail_the_strict_build_unless_untranslated_is_warn(tmp_path):
    root = _site(tmp_path)
    assert _run(root, sys.executable, "-m", "po_i18n", "update").returncode == 0  # nothing translated
    strict = _run(root, *MKDOCS, "build", "--strict")
    assert strict.returncode == 1
    assert "WARNING -  index.md: 4 of 4 messages are untranslated or fuzzy in 'fr'" in strict.stderr
    config = root / "mkdocs.yml"
    config.write_text(config.read_text(encoding="utf-8").replace("  - po-i18n\n", "  - po-i18n:\n      untranslated: warn\n"),
                      encoding="utf-8")
    published = _run(root, *MKDOCS, "build", "--strict")
    assert published.returncode == 0, published.stderr
    assert "INFO    -  index.md: 4 of 4 messages are untranslated or fuzzy in 'fr'" in published.stderr
    assert "This site documents widgets." in (root / "site" / "fr" / "index.html").read_text(encoding="utf-8")


def test_the_status_page_and_the_notice_follow_their_options(tmp_path):
    root = _site(tmp_path, plugin="  - po-i18n:\n      untranslated: warn\n      notice: false\n      status_page: status.md\n")
    assert _run(root, sys.executable, "-m", "po_i18n", "update").returncode == 0
    proc = _run(root, *MKDOCS, "build", "--strict")
    assert proc.returncode == 0, proc.stderr
    status = (root / "site" / "fr" / "status" / "index.html").read_text(encoding="utf-8")
    assert "<table>" in status and ">Welcome</a>" in status and ">Guide</a>" in status
    assert "course-notice" not in (root / "site" / "fr" / "index.html").read_text(encoding="utf-8")


def test_the_status_pages_language_selector_leads_to_the_status_page_in_each_language(tmp_path):
    """mkdocs-static-i18n points Material's selector only on pages it knows; on the generated
    status page it kept the previous page's links (po_i18n.selector.point_selector)."""
    root = _site(tmp_path, plugin="  - po-i18n:\n      untranslated: warn\n      status_page: status.md\n")
    with (root / "mkdocs.yml").open("a", encoding="utf-8") as config:
        config.write("theme:\n  name: material\nnav:\n  - index.md\n  - guide.md\n  - status.md\n")
    assert _run(root, sys.executable, "-m", "po_i18n", "update").returncode == 0
    proc = _run(root, *MKDOCS, "build", "--strict")
    assert proc.returncode == 0, proc.stderr
    for language, page in (("en", root / "site" / "status" / "index.html"), ("fr", root / "site" / "fr" / "status" / "index.html")):
        links = dict(re.findall(r'<a href="([^"]*)" hreflang="(en|fr)" class="md-select__link"',
                                page.read_text(encoding="utf-8")))
        resolved = {lang: (page.parent / href).resolve() for href, lang in links.items()}
        assert resolved == {"en": (root / "site" / "status").resolve(), "fr": (root / "site" / "fr" / "status").resolve()}, \
            (language, links)


def test_po_i18n_check_says_the_same_as_the_build_about_attr_list(tmp_path):
    root = _site(tmp_path, extensions="  - admonition\n  - tables\n")
    assert _run(root, sys.executable, "-m", "po_i18n", "update").returncode == 0
    proc = _run(root, sys.executable, "-m", "po_i18n", "check")
    assert proc.returncode == 1
    assert proc.stdout.splitlines()[0] == ("po-i18n: translated headings keep their English anchors as '{ #id }' attribute "
                                           "lists, which need the attr_list extension: add '- attr_list' under "
                                           "markdown_extensions in mkdocs.yml")


@pytest.mark.parametrize("setting, says", [("fail", "refused by mkdocs build --strict"),
                                           ("warn", "published in English by mkdocs build --strict (untranslated: warn)")])
def test_po_i18n_check_says_what_the_strict_build_does_with_untranslated_messages(tmp_path, setting, says):
    root = _site(tmp_path, plugin=f"  - po-i18n:\n      untranslated: {setting}\n")
    assert _run(root, sys.executable, "-m", "po_i18n", "update").returncode == 0
    proc = _run(root, sys.executable, "-m", "po_i18n", "check")
    assert f"not yet translated, shown in English and {says}: i18n/fr/" in proc.stdout, proc.stdout
    strict = _run(root, *MKDOCS, "build", "--strict")
    assert (strict.returncode == 0) == (setting == "warn") == (proc.returncode == 0), (strict.stderr, proc.stdout)


def test_po_i18n_check_names_english_added_since_the_last_update(tmp_path):
    """A new English paragraph is in no catalog until po-i18n update: check says so, as the
    build does, and fails as the strict build does (found by a fresh adopter)."""
    root = _site(tmp_path)
    _translate(root)
    assert _run(root, sys.executable, "-m", "po_i18n", "check").returncode == 0
    page = root / "docs" / "index.md"
    page.write_text(page.read_text(encoding="utf-8") + "\nA sentence no catalog holds yet.\n", encoding="utf-8")
    proc = _run(root, sys.executable, "-m", "po_i18n", "check")
    assert proc.returncode == 1
    assert ("index.md: 1 of 5 messages are untranslated or fuzzy in 'fr' and are shown in English; add the new ones "
            "with: po-i18n update --lang fr, then translate them in i18n/fr/index.po") in proc.stdout.splitlines(), proc.stdout
    assert _run(root, *MKDOCS, "build", "--strict").returncode == 1
