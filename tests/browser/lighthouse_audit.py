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
import functools
import gzip
import http.server
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CATEGORIES = ("performance", "accessibility", "best-practices", "seo")
CHROME_FLAGS = ("--headless=new --no-sandbox --disable-gpu --disable-background-networking "
                "--disable-component-update --disable-sync --no-first-run")
COMPRESSIBLE = (".html", ".css", ".js", ".json", ".xml", ".svg")


class GzipHandler(http.server.SimpleHTTPRequestHandler):
    """Static files, gzip-compressed when the client accepts it."""

    def log_message(self, *args):
        pass

    def send_head(self):
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            path = path / "index.html"
        if "gzip" not in self.headers.get("Accept-Encoding", "") or path.suffix not in COMPRESSIBLE or not path.is_file():
            return super().send_head()
        body = gzip.compress(path.read_bytes())
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        import io

        return io.BytesIO(body)


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
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base = f"http://127.0.0.1:{port}/"
    with tempfile.TemporaryDirectory(prefix="course-lighthouse-") as tmp:
        site = Path(tmp) / "site"
        env = {**os.environ, "SITE_URL": base, "NO_MKDOCS_2_WARNING": "1"}
        subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(site)], cwd=ROOT, env=env, check=True)
        httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), functools.partial(GzipHandler, directory=str(site)))
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        pages = []
        for lang in ("", "ru/", "ja/", "tr/", "sv/"):
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
        httpd.shutdown()
    args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"{'page':<18}" + "".join(f"{c:>16}" for c in CATEGORIES))
    for page, scores in results.items():
        print(f"{page:<18}" + "".join(f"{scores[c]:>16g}" for c in CATEGORIES))
    return 0


if __name__ == "__main__":
    sys.exit(main())
