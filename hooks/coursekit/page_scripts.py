"""A built page's scripts, run after its first paint: one loader for every page.

Measured with Lighthouse (mobile, 4x CPU slowdown) on this course's lessons:

- With ``<script defer src>``, whenever the stylesheet arrived last the scripts ran before
  the first frame, and the first paint waited for Material's whole start-up (LCP 2.4 s
  instead of 1.2 s). So each ``<script src>`` becomes an inert ``<script
  data-course-src>``, and one small inline loader (``LOADER``) appends them, in order,
  one frame after the first paint (or after 1 s where no frame comes, as in a hidden tab).
- Material swaps ``<html class="no-js">`` for ``js`` first thing in its bundle. A class
  change on the root element restyles the whole page, and the bundle then reads the
  scroll position (``getViewportOffset``), a forced style and layout of about 3,000
  elements inside the bundle's task. ``CLASS_SWAP`` makes that swap in the head, before
  the page is first styled, so Material's own swap changes nothing. On
  /ja/data-vs-model-parallelism/ the median Total Blocking Time went from 193 ms to 82 ms
  (3 runs each, same machine, one after the other).

Material starts on ``DOMContentLoaded`` only (its ``document$``: ``fromEvent(document,
"DOMContentLoaded", {once: true})``, never a ``readyState`` check), which has fired by
the time the bundle runs. So once the last script has run, the loader dispatches that
event again, in a task of its own, so that Material's start-up is not added to the task
of the last script's evaluation. If parsing is still going on, the real event is still
to come and nothing is dispatched. Then ``<html data-course-scripts="started">`` says
the page is interactive, or ``"failed"`` if a script did not load or, on a Material page
(one with its ``__config``), Material's bundle did not run (no ``window.document$``: it
did not load, or it threw). Where a script failed and Material's bundle did not run, the
class goes back to ``no-js``, so that the page shows what it shows without JavaScript
(Material's CSS hides the search box that would do nothing).
"""
from __future__ import annotations

import re

# The marker of a page this module has already changed.
LOADER_MARK = "data-course-loader"

CLASS_SWAP = '<script>document.documentElement.classList.replace("no-js","js")</script>'

LOADER = """(function(){var begun=false,failed=false,root=document.documentElement;
function started(){var material=!!window.document$;
if(document.getElementById("__config")&&!material){failed=true}
if(failed&&!material){root.classList.replace("js","no-js")}
root.dataset.courseScripts=failed?"failed":"started"}
function start(){if(begun){return}begun=true;
var later=document.querySelectorAll("script[data-course-src]"),left=later.length;
later.forEach(function(s){var n=document.createElement("script");n.src=s.getAttribute("data-course-src");n.async=false;
n.onerror=function(){failed=true;n.onload()};
n.onload=function(){if(--left>0){return}
if(document.readyState==="loading"){document.addEventListener("DOMContentLoaded",started)}
else{setTimeout(function(){document.dispatchEvent(new Event("DOMContentLoaded",{bubbles:true}));started()},0)}};
document.head.appendChild(n)})}
requestAnimationFrame(function(){setTimeout(start,0)});setTimeout(start,1000)})()"""

# A script file as MkDocs and Material write it (mkdocs.utils.templates.script_tag): src,
# with defer and async before or after it.
_SCRIPT_SRC = re.compile(r'<script (?:(?:defer|async) )*src="([^"]*)"(?: (?:defer|async))*></script>')
_LOADER_TAG = f"<script {LOADER_MARK}>"
_NO_JS_ROOT = re.compile(r'<html\b[^>]*\bclass="[^"]*\bno-js\b')
CHARSET = re.compile(r'<meta charset="utf-8">')  # where a Material page's head begins
_HEAD = re.compile(r"<head>")


def defer_scripts(html: str) -> str:
    """The page with its script files loaded by ``LOADER`` after its first paint.

    Each ``<script src="…"></script>`` (with ``defer`` and ``async`` or without) becomes
    ``<script data-course-src="…"></script>``, in place, so the order stays that of the
    page; the loader goes just before ``</body>``. Where the root element has the class
    ``no-js`` (Material's base.html), ``CLASS_SWAP`` goes right after ``<meta
    charset="utf-8">`` (else right after ``<head>``), before any stylesheet. Inline
    scripts, JSON data blocks and a script with other attributes are left as they are.

    Args:
        html: a rendered page (str).

    Returns:
        The page (str); unchanged if it has no script file. On a page changed already,
        only script files added since are made placeholders: it keeps one loader and one
        class swap.
    """
    if not _SCRIPT_SRC.search(html):
        return html
    html = _SCRIPT_SRC.sub(lambda m: f'<script data-course-src="{m.group(1)}"></script>', html)
    if _NO_JS_ROOT.search(html) and CLASS_SWAP not in html:
        anchor = CHARSET if CHARSET.search(html) else _HEAD
        html = anchor.sub(lambda m: f"{m.group(0)}\n    {CLASS_SWAP}", html, count=1)
    if _LOADER_TAG in html:
        return html
    loader = f"{_LOADER_TAG}{LOADER}</script>\n"
    at = html.rfind("</body>")
    return html + loader if at < 0 else html[:at] + loader + html[at:]
