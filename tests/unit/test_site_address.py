"""Links of a build without site_url: relative to the page, whatever the host and sub-path."""
from __future__ import annotations

import posixpath

import pytest

from coursekit.page_scripts import CLASS_SWAP, defer_scripts
from coursekit.site_address import portable_404, relative_href


@pytest.mark.parametrize("href, page_url, root, expected", [
    ("/ru/", "", "/", "ru/"),                       # English home -> Russian home
    ("/", "ru/", "/", "../"),                       # Russian home -> English home
    ("/ru/", "ru/", "/", "./"),                     # the page itself
    ("/course/ja/", "ru/ddp-basics/", "/course/", "../../ja/"),
    ("/course/", "ru/404.html", "/course/", "../"),  # a page that is a file
    ("../../ja/ddp-basics/", "ru/ddp-basics/", "/", "../../ja/ddp-basics/"),  # already relative
    ("https://other.example/ru/", "", "/", "https://other.example/ru/"),
    ("#top", "ru/", "/", "#top"),
    ("/elsewhere/", "", "/course/", "/elsewhere/"),  # not under the site root: left alone
])
def test_relative_href(href, page_url, root, expected):
    assert relative_href(href, page_url, root) == expected
    if href.startswith(root) and expected != href:  # and it resolves to the same place
        folder = page_url if page_url.endswith("/") or not page_url else posixpath.dirname(page_url) + "/"
        resolved = posixpath.normpath(posixpath.join(root, folder, expected)) + "/"
        assert resolved.replace("//", "/") == href


def test_a_page_that_is_not_materials_404_is_refused_by_name():
    with pytest.raises(ValueError, match=r"^ru/404\.html: not a Material 404 page"):
        portable_404("<html><head></head><body></body></html>", "ru/404.html", ["ru"])


def test_a_portable_404_loads_nothing_before_it_knows_the_site_root():
    html = ('<html><head><meta charset="utf-8"><script>__md_scope=new URL("..",location)</script>'
            '<link rel="stylesheet" href="../assets/main.css"></head>'
            '<body><script id="__config" type="application/json">{"base": ".."}</script>'
            '<script src="../assets/bundle.js"></script></body></html>')
    out = portable_404(html, "ru/404.html", ["ru", "assets"])
    head, body = out.split("</head>")
    # the config is made absolute right where it stands, before any script can read it
    assert body.split('{"base": ".."}</script>', 1)[1].startswith('<script>(function(){var c=document.getElementById("__config")')
    assert ' href="../assets/main.css"' not in head.split("<noscript>")[0]  # only in the no-JavaScript fallback
    assert 'data-course-href="../assets/main.css"' in head
    assert '<script src=' not in body and 'data-course-src="../assets/bundle.js"' in body
    assert head.index("document.createElement(\"base\")") < head.index("data-course-href")
    assert '__md_scope=new URL("..",document.baseURI)' in head


def test_a_portable_404_whose_scripts_the_hook_deferred_loads_each_script_once():
    # hooks/page_scripts.py has already made the page's scripts placeholders and added the loader
    html = defer_scripts('<html class="no-js"><head><meta charset="utf-8"><script>__md_scope=new URL("..",location)'
                         '</script></head><body><script src="../assets/bundle.js"></script></body></html>')
    out = portable_404(html, "ru/404.html", ["ru", "assets"])
    assert out.count('createElement("script")') == 1 and out.count(CLASS_SWAP) == 1  # not a second loader
    assert "d.base=new URL(d.base,document.baseURI)" in out.split("</body>")[0].rsplit("<script>", 1)[1]
