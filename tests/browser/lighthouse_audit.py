"""Lighthouse scores of each language's home page and lessons (run on demand, not a test).

Usage (after ``make test``'s set-up, with Debian's chromium and Node.js)::

    npm install --prefix .cache/lighthouse lighthouse@12.8.2   # newest that runs on Node 20
    bash tests/system-deps.sh    # Chromium and a Japanese font, if make test has not run
    .venv/bin/python tests/browser/lighthouse_audit.py [--runs 3] [--build both] [--scheme both] [--json lighthouse.json]

It builds the site twice, as ``make site`` does (no ``SITE_URL``) and for its address
(``SITE_URL``), serves each under a sub-path (``/course/``) gzip-compressed as real
hosting does (``shared/BROWSER-FACTS.md``: Python's http.server alone does not
compress), runs Lighthouse's default (mobile) audit with Debian's Chromium, and prints
the median score of each category per build and page over ``--runs`` runs.

``--scheme dark`` (or ``both``) measures the pages as a reader whose system prefers a dark
colour scheme sees them, in Material's slate scheme (mkdocs.yml ``theme.palette``): those
runs go through Lighthouse's Node API on a Puppeteer page that emulates
``prefers-color-scheme`` (``lighthouse_scheme.mjs`` beside this file, which also checks
that the page really is in slate), since Lighthouse's command line cannot emulate it. Their
rows end in ``dark``; compare their performance with light rows measured the same way
(``--scheme light-api``) rather than with the command line's.

Lighthouse slows the CPU down 4x (its mobile default), whatever the machine: on a slower
machine the same page blocks longer and scores lower (the home page: performance 96-98 at
benchmark index about 2,700, 86-88 at 1,100-1,400, the same build). ``--cpu-slowdown X``
sets Lighthouse's ``throttling.cpuSlowdownMultiplier``, calibrated from the benchmark index
as Lighthouse's docs/throttling.md ("Calibrating the CPU slowdown") describes; every row
says which multiplier it was measured at. Compare scores only at the same multiplier and
a similar benchmark index.

Japanese pages are measured only where a Japanese font is installed (``fc-list
:lang=ja``): without one, Chromium searches for a fallback glyph by glyph and draws empty
boxes, which made the first layout of a Japanese lesson take 70 ms instead of 21 ms here,
so the score would describe a page no reader sees.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))  # run as a script: site_server sits in tests/

from coursekit.languages import published_languages  # noqa: E402
from po_i18n.project import Project  # noqa: E402
from site_server import serve_built_site  # noqa: E402

CATEGORIES = ("performance", "accessibility", "best-practices", "seo")
CHROME_FLAGS = ("--headless=new --no-sandbox --disable-gpu --disable-background-networking "
                "--disable-component-update --disable-sync --no-first-run")
BUILDS = {"default": False, "hosted": True}  # build name: built with SITE_URL?
# --scheme: the colour schemes measured; None: Lighthouse's command line (no emulation, light).
SCHEMES = {"light": (None,), "dark": ("dark",), "both": (None, "dark"), "light-api": ("light",)}
SCHEME_RUNNER = Path(__file__).with_name("lighthouse_scheme.mjs")
# Lighthouse's mobile CPU throttling (its constants.js, throttling.mobileSlow4G).
DEFAULT_CPU_SLOWDOWN = 4.0
# The metrics behind the performance score (milliseconds; layout shift unitless), from
# each report's audits (https://developer.chrome.com/docs/lighthouse/performance/performance-scoring).
METRICS = ("first-contentful-paint", "largest-contentful-paint", "total-blocking-time", "cumulative-layout-shift",
           "speed-index")


def _lighthouse() -> list[str]:
    local = ROOT / ".cache" / "lighthouse" / "node_modules" / ".bin" / "lighthouse"
    if local.is_file():
        return [str(local)]
    found = shutil.which("lighthouse")
    if found:
        return [found]
    raise SystemExit("lighthouse not found; run: npm install --prefix .cache/lighthouse lighthouse@12.8.2")


# One page of a whole program (hooks/program_pages.py): the 41 of each language share one
# layout, and this one has the longest listing of lesson 2.
PROGRAM_PAGE = "programs/ddp_basics/train/"


def _pages(project: Project) -> list[str]:
    """The home page, every lesson (a page that includes code from snippets/) and
    :data:`PROGRAM_PAGE`, as paths under a language root."""
    lessons = [p.with_suffix("").as_posix() + "/" for p in project.pages()
               if "--8<--" in (project.docs_dir / p).read_text(encoding="utf-8")]
    return ["", *lessons, PROGRAM_PAGE]


def _japanese_font() -> str | None:
    """The family of an installed font with Japanese glyphs, or None (fontconfig's
    ``fc-list :lang=ja``; None also where fontconfig is missing)."""
    try:
        found = subprocess.run(["fc-list", ":lang=ja", "family"], capture_output=True, text=True, check=False).stdout
    except FileNotFoundError:
        return None
    return found.splitlines()[0] if found.strip() else None


def _run_once(lighthouse: list[str], url: str, report_path: Path, scheme: str | None,
              cpu_slowdown: float = DEFAULT_CPU_SLOWDOWN) -> None:
    """One Lighthouse run of ``url`` writing its JSON report to ``report_path``: its command
    line, or with ``scheme`` (``dark``, ``light``) its Node API with that
    ``prefers-color-scheme`` emulated (``lighthouse_scheme.mjs``; it exits 1, and so this
    raises ``CalledProcessError``, when the page is not in Material's scheme for it).
    ``cpu_slowdown`` is Lighthouse's ``throttling.cpuSlowdownMultiplier`` (a factor > 0)."""
    env = {**os.environ, "CHROME_PATH": shutil.which("chromium") or "/usr/bin/chromium"}
    if scheme is None:
        subprocess.run([*lighthouse, url, "--only-categories=" + ",".join(CATEGORIES), f"--chrome-flags={CHROME_FLAGS}",
                        f"--throttling.cpuSlowdownMultiplier={cpu_slowdown!r}",
                        "--output=json", f"--output-path={report_path}", "--quiet"], env=env, check=True)
        return
    modules = Path(lighthouse[0]).resolve().parents[2]  # node_modules/lighthouse/cli/index.js
    subprocess.run(["node", str(SCHEME_RUNNER), str(modules), url, scheme, str(report_path), ",".join(CATEGORIES),
                    CHROME_FLAGS, repr(cpu_slowdown)], env=env, check=True)


def _audit(lighthouse: list[str], url: str, runs: int, out: Path, scheme: str | None = None,
           cpu_slowdown: float = DEFAULT_CPU_SLOWDOWN) -> dict:
    """Median score per category of ``runs`` Lighthouse runs of one URL, and each run's
    (``scheme``, ``cpu_slowdown``: see :func:`_run_once`).

    Each run's report is written to ``out`` as ``report-<n>.json`` (Lighthouse's JSON
    output), replacing an earlier page's; ``--reports`` keeps them instead.

    Raises:
        SystemExit: a report was measured at another CPU slowdown than asked for."""
    scores = []
    for n in range(runs):
        report_path = out / f"report-{n}.json"
        _run_once(lighthouse, url, report_path, scheme, cpu_slowdown)
        report = json.loads(report_path.read_text(encoding="utf-8"))
        used = report["configSettings"]["throttling"]["cpuSlowdownMultiplier"]
        if not math.isclose(used, cpu_slowdown):
            raise SystemExit(f"{url}: Lighthouse measured at a CPU slowdown of {used!r}, not {cpu_slowdown!r}")
        scores.append({c: round(100 * report["categories"][c]["score"]) for c in CATEGORIES}
                      | {m: round(report["audits"][m]["numericValue"], 3) for m in METRICS}
                      # Lighthouse's measure of this machine's CPU speed, to compare runs on
                      # different machines (higher is faster; a report's environment).
                      | {"benchmark-index": report["environment"]["benchmarkIndex"]})
    return {c: statistics.median(r[c] for r in scores) for c in (*CATEGORIES, *METRICS, "benchmark-index")} \
        | {"cpu-slowdown": cpu_slowdown, "runs": scores}


def _row(key: str, scores: dict) -> str:
    """One table row: the median score of each category, then the median metrics."""
    metrics = ", ".join(f"{scores[m]:.3g}" if m == "cumulative-layout-shift" else f"{scores[m]:.0f}" for m in METRICS)
    return (f"{key:<44}" + "".join(f"{scores[c]:>16g}" for c in CATEGORIES) + f"   {metrics}"
            + f"   {scores['benchmark-index']:.0f} at {scores['cpu-slowdown']:g}x")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per page; the median is reported")
    parser.add_argument("--build", choices=(*BUILDS, "both"), default="both",
                        help="default: no SITE_URL, as make site; hosted: SITE_URL set to the served address")
    parser.add_argument("--scheme", choices=SCHEMES, default="light",
                        help="colour scheme of the reader's system: light (Lighthouse's command line, as before), "
                             "dark (prefers-color-scheme: dark emulated, Material's slate), both, or light-api "
                             "(light through the same Node API as dark, to compare performance; default: %(default)s)")
    parser.add_argument("--sub-path", default="/course/", help="where the site is served (default: %(default)s)")
    parser.add_argument("--json", type=Path, default=Path("lighthouse.json"), help="where to write all scores")
    parser.add_argument("--warm-up", type=int, default=1, metavar="N",
                        help="Lighthouse runs of the first page to make and discard after each build, before "
                             "measuring (default: %(default)s; the first runs after a build measured up to 3x "
                             "the Total Blocking Time of later ones here, at a lower benchmark index)")
    parser.add_argument("--reports", type=Path, metavar="DIR",
                        help="keep every run's full Lighthouse report (JSON) under DIR/<build>/<page>/ "
                             "to read its long tasks and diagnostics (default: reports are discarded)")
    parser.add_argument("--page", action="append", metavar="PATH",
                        help="only this page, as a path under a language root such as ddp-basics/ (repeatable; "
                             "default: the home page and every lesson)")
    parser.add_argument("--language", action="append", metavar="CODE",
                        help="only this language (en for the default one; repeatable; default: all)")
    parser.add_argument("--cpu-slowdown", type=float, default=DEFAULT_CPU_SLOWDOWN, metavar="X",
                        help="Lighthouse's CPU slowdown multiplier (default: %(default)g, Lighthouse's own); "
                             "on a slower machine calibrate it from the benchmark index as Lighthouse's "
                             "docs/throttling.md says (a low-end desktop, index 1000-1500: about 2)")
    args = parser.parse_args(argv)
    if not (math.isfinite(args.cpu_slowdown) and args.cpu_slowdown > 0):
        parser.error(f"--cpu-slowdown {args.cpu_slowdown:g}: give a finite factor above 0 (4 is Lighthouse's default)")
    lighthouse = _lighthouse()
    project = Project.load(ROOT / "mkdocs.yml")
    pages = _pages(project)
    if args.page:
        unknown = sorted(set(args.page) - set(pages))
        if unknown:
            parser.error(f"--page {unknown[0]!r} is not one of the audited pages: {', '.join(repr(p) for p in pages)}")
        pages = args.page
    languages = ("", *(f"{code}/" for code in published_languages(project)[1:]))
    if args.language:
        languages = tuple("" if code == project.default_language else f"{code}/" for code in args.language)
    if "ja/" in languages and _japanese_font() is None:
        parser.error("no Japanese font is installed (fc-list :lang=ja is empty), so Japanese pages would be "
                     "measured drawing empty boxes; install one with: bash tests/system-deps.sh "
                     "(or sudo apt-get install fonts-noto-cjk), or leave out --language ja")
    results = {}
    for build in BUILDS if args.build == "both" else (args.build,):
        with tempfile.TemporaryDirectory(prefix="course-lighthouse-") as tmp, \
                serve_built_site(Path(tmp) / "site", args.sub_path, gzip=True, with_site_url=BUILDS[build]) as base:
            if args.warm_up > 0:
                _audit(lighthouse, f"{base}{languages[0]}{pages[0]}", args.warm_up, Path(tmp), None, args.cpu_slowdown)
            for scheme in SCHEMES[args.scheme]:
                for lang in languages:
                    for page in pages:
                        key = f"{build} /{lang}{page}" + (f" {scheme}" if scheme else "")
                        out = Path(tmp)
                        if args.reports:
                            out = args.reports / build / ((f"{lang}{page}".strip("/").replace("/", "-") or "home")
                                                          + (f"-{scheme}" if scheme else ""))
                            out.mkdir(parents=True, exist_ok=True)
                        results[key] = _audit(lighthouse, f"{base}{lang}{page}", args.runs, out, scheme,
                                              args.cpu_slowdown)
                        print(_row(key, results[key]), flush=True)
    args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"\n{'build and page':<44}" + "".join(f"{c:>16}" for c in CATEGORIES) + "   FCP, LCP, TBT (ms), CLS, SI (ms)"
          "   benchmark index at CPU slowdown")
    for key, scores in results.items():
        print(_row(key, scores))
    return 0


if __name__ == "__main__":
    sys.exit(main())
