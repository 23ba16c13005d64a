"""The test server (tests/site_server.py) serves as a static host does: gzip when asked,
the redirect to a folder's address with a slash, the nearest 404.html."""
from __future__ import annotations

import gzip
import urllib.error
import urllib.request

import pytest

from site_server import serve_folder


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "ru").mkdir()
    (tmp_path / "ru" / "index.html").write_text("<p>" + "страница " * 200 + "</p>", encoding="utf-8")
    (tmp_path / "ru" / "404.html").write_text("<p>нет такой</p>", encoding="utf-8")
    (tmp_path / "logo.png").write_bytes(b"\x89PNG" + bytes(100))
    return tmp_path


def _get(url: str, encoding: str | None = None):
    request = urllib.request.Request(url, headers={"Accept-Encoding": encoding} if encoding else {})
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def test_text_is_gzip_compressed_when_the_client_accepts_it(folder):
    page = (folder / "ru" / "index.html").read_bytes()
    with serve_folder(folder, gzip=True) as base:
        status, headers, body = _get(base + "ru/", "gzip, deflate")
        assert status == 200 and headers["Content-Encoding"] == "gzip" and len(body) < len(page) / 5
        assert gzip.decompress(body) == page
        status, headers, body = _get(base + "ru/")  # a client that does not ask for it
        assert status == 200 and headers["Content-Encoding"] is None and body == page
        status, headers, body = _get(base + "logo.png", "gzip")  # images are compressed already
        assert headers["Content-Encoding"] is None and body == (folder / "logo.png").read_bytes()
    with serve_folder(folder) as base:  # gzip off: as Python's http.server
        assert _get(base + "ru/", "gzip")[1]["Content-Encoding"] is None


def test_a_folder_without_a_slash_redirects_and_a_missing_page_gets_the_nearest_404(folder):
    with serve_folder(folder, gzip=True) as base:
        with urllib.request.urlopen(base + "ru") as response:  # urllib follows the redirect
            assert response.url == base + "ru/"
        status, _, body = _get(base + "ru/no-such-page/")
        assert status == 404 and "нет такой" in body.decode("utf-8")
