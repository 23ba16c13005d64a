"""Lighthouse scores of each language's home page and one lesson (run on demand, not a test).

Usage (after ``make test``'s set-up, with Debian's chromium and Node.js)::

    npm install --prefix .cache/lighthouse lighthouse@12.8.2   # newest that runs on Node 20
    .venv/bin/python tests/browser/lighthouse_audit.py [--runs 3] [--json lighthouse.json]

It builds the site for ``http://127.0.0.1:PORT/``, serves it gzip-compressed as real
hosting does (``shared/BROWSER-FACTS.md``: Python's http.server alone does not compress),
runs Lighthouse's default (mobile) audit with Debian's Chromium, and prints the median
score of each category per page over ``--runs`` runs.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))  # run as a script: site_server sits in tests/

from coursekit.project import Project  # noqa: E402
from site_server import serve_built_site  # noqa: E402

CATEGORIES = ("performance", "accessibility", "best-practices", "seo")
CHROME_FLAGS = ("--headless=new --no-sandbox --disable-gpu --disable-background-networking "
                "--disable-component-update --disable-sync --no-first-run")


def _lighthouse() -> list[str]:
    local = ROOT / ".cache" / "lighthouse" / "node_modules" / ".bin" / "lighthouse"
    if local.is_file():
        return [str(local)]
    found = shutil.which("lighthouse")
    if found:
        return [found]
    raise SystemExit("lighthouse not found; run: npm install --prefix .cache/lighthouse lighthouse@12.8.2")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per page; the median is reported")
    parser.add_argument("--json", type=Path, default=Path("lighthouse.json"), help="where to write all scores")
    args = parser.parse_args(argv)
    lighthouse = _lighthouse()
    with tempfile.TemporaryDirectory(prefix="course-lighthouse-") as tmp, \
            serve_built_site(Path(tmp) / "site", "/", gzip=True) as base:
        pages = []
        project = Project.load(ROOT / "mkdocs.yml")
        for lang in ("", *(f"{code}/" for code in project.languages)):
            pages += [f"{base}{lang}", f"{base}{lang}ddp-basics/"]
        results = {}
        for url in pages:
            runs = []
            for n in range(args.runs):
                out = Path(tmp) / f"report-{len(results)}-{n}.json"
                subprocess.run([*lighthouse, url, "--only-categories=" + ",".join(CATEGORIES), f"--chrome-flags={CHROME_FLAGS}",
                                "--output=json", f"--output-path={out}", "--quiet"],
                               env={**os.environ, "CHROME_PATH": shutil.which("chromium") or "/usr/bin/chromium"}, check=True)
                report = json.loads(out.read_text(encoding="utf-8"))
                runs.append({c: round(100 * report["categories"][c]["score"]) for c in CATEGORIES})
            results[url.removeprefix(base) or "/"] = {c: statistics.median(r[c] for r in runs) for c in CATEGORIES} | {"runs": runs}
    args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"{'page':<18}" + "".join(f"{c:>16}" for c in CATEGORIES))
    for page, scores in results.items():
        print(f"{page:<18}" + "".join(f"{scores[c]:>16g}" for c in CATEGORIES))
    return 0


if __name__ == "__main__":
    sys.exit(main())
