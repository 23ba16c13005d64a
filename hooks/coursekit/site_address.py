"""A site that works wherever it is served: links that do not depend on the host or sub-path.

Without ``site_url`` MkDocs cannot know the address a site will have, so everything that
must be absolute is left out (canonical links, ``hreflang`` alternates, the entries of the
site map: search engines accept only absolute URLs there) and everything else has to be
relative. Two things are not relative in a default MkDocs + Material + mkdocs-static-i18n
build, and this module fixes them:

* the language selector of home pages: mkdocs-static-i18n links each language's home as
  an absolute path (``/ru/``, ``reconfigure.py``, ``reconfigure_material_theme``);
* the 404 pages: MkDocs renders them with absolute paths from the server root, because a
  host shows a 404 page at whatever address was missing, where relative links would
  resolve against that address (``mkdocs/commands/build.py``, ``_build_template``;
  mkdocs issues 77 and 1598). Here a small inline script finds the site root from the
  address instead (:func:`portable_404`).
"""
from __future__ import annotations

import json
import posixpath
import re

from .page_scripts import CHARSET, defer_scripts

__all__ = ["EMPTY_SITEMAP", "NO_SITE_URL_NOTICE", "portable_404", "relative_href"]

# Material fetches <language root>/sitemap.xml on every page (integrations/sitemap), and
# sitemap.xml next to each hreflang alternate. A build without site_url has no absolute
# URL to list, and a site map below the root may list only URLs below its own folder, so
# where Material looks outside the root the file is a valid empty one.
EMPTY_SITEMAP = ('<?xml version="1.0" encoding="UTF-8"?>\n'
                 '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"></urlset>\n')
NO_SITE_URL_NOTICE = ("built without SITE_URL, for any address and sub-path; set SITE_URL=https://host/path/ "
                      "to add canonical links, hreflang alternates and a site map")


def relative_href(href: str, page_url: str, root_path: str = "/") -> str:
    """A link given as an absolute path made relative to the page it is on.

    Args:
        href: the link, e.g. ``/course/ru/``; anything that is not an absolute path under
            ``root_path`` (a relative link, a full URL, ``#top``) is returned unchanged.
        page_url: the page's URL relative to the site root, as MkDocs gives it
            (``ru/ddp-basics/``, ``""`` for the home page, ``ru/404.html``).
        root_path: the site root's path on the server (``/course/``), ``/`` without
            ``site_url``.

    Returns:
        The relative link (``../ja/``, ``./``), with the trailing slash kept.
    """
    root = root_path.rstrip("/") + "/"
    if not href.startswith(root) or href.startswith("//"):
        return href
    target = href[len(root):]
    folder = page_url if page_url.endswith("/") or not page_url else posixpath.dirname(page_url) + "/"
    relative = posixpath.relpath("/" + target, "/" + folder)
    if target.endswith("/") or not target:
        relative = "./" if relative == "." else relative + "/"
    return relative


_LINK_HREF = re.compile(r'(<link\b[^>]*?) href="')
_SCOPE = "__md_scope=new URL("  # Material's base.html: localStorage keys scoped to the site root
_CONFIG = re.compile(r'<script id="__config" type="application/json">.*?</script>', re.S)
_STYLESHEET = re.compile(r'<link rel="stylesheet" data-course-href="([^"]*)">')

# Finds the site root from the address the 404 page is shown at, and makes it the page's
# base URL: the page itself (its own address ends in OWN), else the part of the address
# before the first segment the site has at its top level (a language, a lesson, assets:
# a missing address is mostly a mistyped or moved page under one of them), else the
# folder above the missing address (a page one level below the root, where lessons are).
_FIND_ROOT = """(function(){var own=%(own)s,names=%(names)s,path=location.pathname,parts=path.split("/"),root=null,i;\
if(path.slice(-own.length-1)==="/"+own){root=path.slice(0,-own.length)}\
else{for(i=1;i<parts.length;i++){if(names.indexOf(parts[i])>=0){root=parts.slice(0,i).join("/")+"/";break}}}\
if(root===null){root=path.replace(/[^/]*\\/?$/,"")||"/"}\
var base=document.createElement("base");base.href=root+own.slice(0,own.lastIndexOf("/")+1);document.head.appendChild(base)})()"""
# Once the head's links are parsed: load them against that base. Hrefs are set only now,
# since the browser's preload scanner would fetch them against the missing address first.
_LOAD_LINKS = ('document.querySelectorAll("link[data-course-href]").forEach(function(l)'
               '{l.setAttribute("href",l.getAttribute("data-course-href"))})')
# Right after Material's __config: the config made absolute (Material resolves it against
# location, not the base URL), before any script can read it; the page's scripts load
# after its first paint, against the base URL (coursekit.page_scripts).
_FIX_CONFIG = ('var c=document.getElementById("__config");if(c){var d=JSON.parse(c.textContent);'
               'd.base=new URL(d.base,document.baseURI).href;d.search=new URL(d.search,document.baseURI).href;'
               'c.textContent=JSON.stringify(d)}')


def portable_404(html: str, own_path: str, top_names: list[str]) -> str:
    """A 404 page of a build without ``site_url``, made to work at any missing address.

    Its links must be relative to its own place in the site (MkDocs's ``base_url`` for
    the template set to ``.`` or ``..``). The page then finds the site root at run time
    (see ``_FIND_ROOT``) and sets a ``<base>`` for it; its stylesheets and scripts load
    only after that. Without JavaScript, the stylesheets in a ``<noscript>`` still work
    where the page is shown at its own address or in its own folder.

    Args:
        html: the rendered 404 page.
        own_path: where it lies in the site: ``404.html``, ``ru/404.html``.
        top_names: the names at the top of the built site (``ru``, ``ddp-basics``,
            ``assets``, …).

    Returns:
        The page.

    Raises:
        ValueError: the page is not the Material 404 page this expects (no
            ``<meta charset="utf-8">``, no ``__md_scope``), naming what is missing.
    """
    if not CHARSET.search(html) or _SCOPE not in html:
        raise ValueError(f"{own_path}: not a Material 404 page (no <meta charset> or __md_scope); "
                         "hooks/seo_alternates.py cannot make it work at any address")
    finder = _FIND_ROOT % {"own": json.dumps(own_path), "names": json.dumps(sorted(top_names))}
    html = CHARSET.sub(lambda m: f"{m.group(0)}\n    <script>{finder}</script>", html, count=1)
    html = re.sub(r'(__md_scope=new URL\("[^"]*"),location\)', r"\1,document.baseURI)", html, count=1)
    html = _LINK_HREF.sub(r'\1 data-course-href="', html)
    stylesheets = "".join(f'<link rel="stylesheet" href="{href}">' for href in _STYLESHEET.findall(html))
    html = html.replace("</head>", f"  <script>{_LOAD_LINKS}</script>\n    <noscript>{stylesheets}</noscript>\n  </head>", 1)
    fix = f"<script>(function(){{{_FIX_CONFIG}}})()</script>"
    config_end = _CONFIG.search(html)
    html = (html[:config_end.end()] + fix + html[config_end.end():] if config_end
            else html.replace("</body>", f"  {fix}\n  </body>", 1))
    return defer_scripts(html)  # a no-op where hooks/page_scripts.py has done it
