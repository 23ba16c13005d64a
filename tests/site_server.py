"""The course site built for a local address and served from it, as a static host would.

Used by the browser tests and by ``tests/browser/lighthouse_audit.py``.
"""
from __future__ import annotations

import contextlib
import functools
import gzip as gzip_module
import http.server
import io
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

from coursekit.net import free_port

ROOT = Path(__file__).resolve().parent.parent
MKDOCS = [sys.executable, "-m", "mkdocs"]
MKDOCS_ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # without Material's end-of-life banner
COMPRESSIBLE = (".html", ".css", ".js", ".json", ".xml", ".svg")


class _StaticHandler(http.server.SimpleHTTPRequestHandler):
    """Static files, quietly; gzip-compressed when ``gzip`` is set and the client accepts
    it (Python's http.server alone never compresses, unlike real hosting)."""

    gzip = False

    def log_message(self, *args):
        pass

    def send_head(self):
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            path = path / "index.html"
        if (not self.gzip or "gzip" not in self.headers.get("Accept-Encoding", "")
                or path.suffix not in COMPRESSIBLE or not path.is_file()):
            return super().send_head()
        body = gzip_module.compress(path.read_bytes())
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return io.BytesIO(body)


@contextlib.contextmanager
def serve_built_site(root: Path, sub_path: str = "/", gzip: bool = False, config: Path | None = None) -> Iterator[str]:
    """Build the site with ``mkdocs build --strict`` for ``http://127.0.0.1:PORT<sub_path>``
    into ``root`` + ``sub_path`` and serve ``root`` on that free port until the block ends.
    ``config`` is the mkdocs.yml to build (default: the project's).

    Yields:
        The site's URL (``SITE_URL`` of the build), ending in ``/``.

    Raises:
        AssertionError: the build failed; the message is its stderr.
    """
    port = free_port()
    site_url = f"http://127.0.0.1:{port}{sub_path}"
    config = config or ROOT / "mkdocs.yml"
    proc = subprocess.run([*MKDOCS, "build", "--strict", "-f", str(config), "--site-dir", str(root / sub_path.strip("/"))],
                          cwd=config.parent, env={**MKDOCS_ENV, "SITE_URL": site_url}, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    handler = type("Handler", (_StaticHandler,), {"gzip": gzip})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), functools.partial(handler, directory=str(root)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield site_url
    finally:
        httpd.shutdown()
        httpd.server_close()
