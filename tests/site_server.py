"""The course site built for a local address and served from it, as a static host would.

Used by the browser tests and by ``tests/browser/lighthouse_audit.py``.
"""
from __future__ import annotations

import contextlib
import fcntl
import functools
import gzip as gzip_module
import hashlib
import http.server
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from coursekit.net import free_port

ROOT = Path(__file__).resolve().parent.parent
MKDOCS = [sys.executable, "-m", "mkdocs"]
# Test builds: without Material's end-of-life banner, and without the caller's SITE_URL or
# PO_I18N_UNTRANSLATED (a build is for a host, or publishes English first, only when a test
# says so: a maintainer's English-first shell must not turn the tests of refusals green).
_CALLERS_ONLY = ("SITE_URL", "REPO_URL", "REPO_BRANCH", "PO_I18N_UNTRANSLATED")
MKDOCS_ENV = {**{k: v for k, v in os.environ.items() if k not in _CALLERS_ONLY}, "NO_MKDOCS_2_WARNING": "1"}
COMPRESSIBLE = (".html", ".css", ".js", ".json", ".xml", ".svg")


class _StaticHandler(http.server.SimpleHTTPRequestHandler):
    """Static files, quietly; gzip-compressed when ``gzip`` is set and the client accepts
    it (Python's http.server alone never compresses, unlike real hosting). A missing
    address gets the nearest ``404.html`` above it, with status 404, as README.md's
    "Deploying" tells a host to do (``/ru/…`` gets ``ru/404.html``)."""

    gzip = False

    def log_message(self, *args):
        pass

    def send_head(self):
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            if not self.path.split("?", 1)[0].endswith("/"):
                return super().send_head()  # the redirect to the address with a slash, as hosts do
            path = path / "index.html"
        if (not self.gzip or "gzip" not in self.headers.get("Accept-Encoding", "")
                or path.suffix not in COMPRESSIBLE or not path.is_file()):
            return super().send_head()  # a missing file: send_error below, with the nearest 404.html
        body = gzip_module.compress(path.read_bytes())
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return io.BytesIO(body)

    def send_error(self, code, message=None, explain=None):
        page = self._not_found_page() if code == 404 else None
        if page is None:
            return super().send_error(code, message, explain)
        body = page.read_bytes()
        self.send_response(404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _not_found_page(self) -> Path | None:
        root = Path(self.directory).resolve()
        folder = Path(self.translate_path(self.path)).resolve()
        while folder == root or root in folder.parents:
            if (folder / "404.html").is_file():
                return folder / "404.html"
            folder = folder.parent
        return None


def shared_build(tmp_path_factory, **env: str) -> tuple[Path, str]:
    """The working tree's site as ``mkdocs build --strict`` builds it with ``env`` added
    (``SITE_URL=...``; none: the default build), built once per test session and shared
    by every module and xdist worker that asks for the same ``env``: ``(the site folder,
    the build's log)``. Read it, never change it: copy it first (:func:`linked_copy`).

    The builds lie under the session's base temporary folder (the one xdist's workers
    share), one folder per ``env``, each made under an ``fcntl`` lock by the first
    process that asks.

    Raises:
        AssertionError: the build failed or warned; the message is its output.
    """
    base = tmp_path_factory.getbasetemp()
    base = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folder = base / "shared-builds" / hashlib.sha256(json.dumps(env, sort_keys=True).encode()).hexdigest()[:16]
    folder.mkdir(parents=True, exist_ok=True)
    site, log = folder / "site", folder / "build.log"
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not log.is_file():
            proc = subprocess.run([*MKDOCS, "build", "--strict", "--site-dir", str(site)], cwd=ROOT,
                                  capture_output=True, text=True, env={**MKDOCS_ENV, **env})
            assert proc.returncode == 0, proc.stdout + proc.stderr
            assert "WARNING -" not in proc.stderr, proc.stderr
            log.write_text(proc.stderr, encoding="utf-8")
    return site, log.read_text(encoding="utf-8")


def linked_copy(site: Path, into: Path) -> Path:
    """A copy of a built site at ``into`` made of hard links (instant, no bytes copied):
    to serve a :func:`shared_build` under a sub-path. Returns ``into``."""
    shutil.copytree(site, into, copy_function=os.link)
    return into


@contextlib.contextmanager
def serve_built_site(root: Path, sub_path: str = "/", gzip: bool = False, with_site_url: bool = True,
                     config: Path | None = None) -> Iterator[str]:
    """Build the site with ``mkdocs build --strict`` into ``root`` + ``sub_path`` and serve
    ``root`` on a free port of 127.0.0.1 until the block ends.

    Args:
        root: the folder to serve; the site goes into its ``sub_path`` folder.
        sub_path: where the site lives on the server, ``/`` or ``/course/``.
        gzip: compress responses, as real hosting does.
        with_site_url: build for ``SITE_URL=http://127.0.0.1:PORT<sub_path>``; if false,
            the default build (no ``SITE_URL``), which must work at any address.
        config: the mkdocs.yml to build (default: the project's).

    Yields:
        The site's URL, ending in ``/``.

    Raises:
        AssertionError: the build failed; the message is its stderr.
    """
    port = free_port()
    site_url = f"http://127.0.0.1:{port}{sub_path}"
    config = config or ROOT / "mkdocs.yml"
    env = {**MKDOCS_ENV, "SITE_URL": site_url} if with_site_url else MKDOCS_ENV
    proc = subprocess.run([*MKDOCS, "build", "--strict", "-f", str(config), "--site-dir", str(root / sub_path.strip("/"))],
                          cwd=config.parent, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    with serve_folder(root, port, gzip) as base:
        yield base + sub_path.lstrip("/")


@contextlib.contextmanager
def serve_folder(root: Path, port: int | None = None, gzip: bool = False) -> Iterator[str]:
    """Serve the files under ``root`` on 127.0.0.1 (``port``, default a free one) until
    the block ends, as :func:`serve_built_site` does; yields ``http://127.0.0.1:PORT/``."""
    port = port or free_port()
    handler = type("Handler", (_StaticHandler,), {"gzip": gzip})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), functools.partial(handler, directory=str(root)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        httpd.shutdown()
        httpd.server_close()


@contextlib.contextmanager
def preview_server(project: Path, log: Path, language: str = "sv", port: int | None = None) -> Iterator[tuple[subprocess.Popen, int]]:
    """``po-i18n serve --lang <language>`` (``make serve-<language>``) of the project at
    ``project`` on 127.0.0.1 (``port``, default a free one), its output written to ``log``;
    yields the server's process and its port, and stops its process group when the block
    ends (SIGTERM, then waits up to 30 s)."""
    port = port or free_port()
    with log.open("w", encoding="utf-8") as sink:
        server = subprocess.Popen([sys.executable, "-m", "po_i18n", "serve", "--lang", language, "--dev-addr",
                                   f"127.0.0.1:{port}"], cwd=project, env=MKDOCS_ENV, stdout=sink,
                                  stderr=subprocess.STDOUT, start_new_session=True)
    try:
        yield server, port
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)


def page_text(url: str) -> str | None:
    """The page at ``url`` as text, or None while the server cannot answer it (it is
    starting or rebuilding, or the page is not there yet)."""
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.read().decode("utf-8")
    except (urllib.error.URLError, OSError):
        return None
