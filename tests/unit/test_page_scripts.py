"""A built page's scripts become placeholders that one loader appends after the first paint."""
from __future__ import annotations

from coursekit.page_scripts import CLASS_SWAP, LOADER, LOADER_MARK, defer_scripts

PAGE = ('<!doctype html>\n<html lang="en" class="no-js">\n  <head>\n    <meta charset="utf-8">\n'
        '    <link rel="stylesheet" href="assets/main.css">\n    <script>__md_scope=1</script>\n  </head>\n'
        '  <body>\n    <script id="__config" type="application/json">{"base": "."}</script>\n'
        '    <script src="assets/bundle.js"></script>\n    <script defer src="assets/course.js"></script>\n'
        '    <script type="module" src="assets/other.js"></script>\n  </body>\n</html>\n')


def test_each_script_file_becomes_a_placeholder_in_its_place_and_the_loader_ends_the_body():
    out = defer_scripts(PAGE)
    assert '<script src=' not in out and "defer src" not in out
    assert out.index('data-course-src="assets/bundle.js"') < out.index('data-course-src="assets/course.js"')
    assert out.endswith(f"<script {LOADER_MARK}>{LOADER}</script>\n</body>\n</html>\n")
    # inline scripts, data blocks and a script with other attributes are as they were
    for kept in ("<script>__md_scope=1</script>", '<script id="__config" type="application/json">',
                 '<script type="module" src="assets/other.js"></script>'):
        assert kept in out


def test_the_no_js_class_is_swapped_before_the_first_stylesheet():
    out = defer_scripts(PAGE)
    assert out.count(CLASS_SWAP) == 1
    assert out.index('<meta charset="utf-8">') < out.index(CLASS_SWAP) < out.index('rel="stylesheet"')


def test_a_page_without_no_js_gets_the_loader_but_no_class_swap():
    out = defer_scripts(PAGE.replace(' class="no-js"', ""))
    assert CLASS_SWAP not in out and LOADER_MARK in out


def test_a_script_file_added_after_the_first_pass_is_deferred_by_the_same_loader():
    once = defer_scripts(PAGE)
    assert defer_scripts(once) == once
    again = defer_scripts(once.replace("</body>", '<script src="assets/late.js" defer async></script></body>'))
    assert 'data-course-src="assets/late.js"' in again and "<script src=" not in again
    assert again.count(f"<script {LOADER_MARK}>") == 1 and again.count(CLASS_SWAP) == 1


def test_a_page_without_script_files_is_unchanged():
    plain = '<html class="no-js"><head></head><body><script>inline()</script></body></html>'
    assert defer_scripts(plain) == plain
