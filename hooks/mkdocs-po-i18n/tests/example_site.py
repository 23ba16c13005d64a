"""Paths and commands the plugin's tests share: the example site beside them, and MkDocs
run as the reader runs it (``python -m mkdocs``, in this interpreter)."""
from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

PACKAGE = Path(__file__).resolve().parents[1]
EXAMPLE = PACKAGE / "example"
MKDOCS = [sys.executable, "-m", "mkdocs"]
# NO_MKDOCS_2_WARNING: Material 9.7+ prints a banner about MkDocs 2.0 on every build
MKDOCS_ENV = {**{k: v for k, v in os.environ.items() if k != "SITE_URL"}, "NO_MKDOCS_2_WARNING": "1"}


def load_module(path: Path) -> ModuleType:
    """Import a Python file that is not on ``sys.path`` (the example's pseudolocalize.py)."""
    spec = importlib.util.spec_from_file_location(f"example_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
