"""The hash that binds a verification record to a program and every local module it imports."""
from __future__ import annotations

import os

from coursekit.verification import content_hash


def _write(path, text, tick):
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(tick, tick))  # a distinct mtime even on coarse-grained file systems


def test_the_hash_follows_a_module_that_starts_importing_another(tmp_path):
    program, helper, extra = tmp_path / "train.py", tmp_path / "helper.py", tmp_path / "extra.py"
    _write(program, "import helper\n", 1_000_000_000)
    _write(helper, "X = 1\n", 1_000_000_000)
    _write(extra, "Y = 2\n", 1_000_000_000)
    first, files = content_hash(program, tmp_path)
    assert sorted(files) == ["helper.py", "train.py"]

    _write(helper, "import extra\nX = 1\n", 2_000_000_000)  # the program itself is untouched
    second, files = content_hash(program, tmp_path)
    assert sorted(files) == ["extra.py", "helper.py", "train.py"]
    assert second != first

    _write(extra, "Y = 3\n", 3_000_000_000)
    assert content_hash(program, tmp_path)[0] != second
