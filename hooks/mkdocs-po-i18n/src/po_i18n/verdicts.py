"""Verdicts of the safety check, kept on disk from one build to the next.

Judging a translation (:func:`po_i18n.safety.PageCheck.problems`) renders it and its
msgid; checking a page (:func:`po_i18n.page_guard.refused_together`) renders the whole
page twice. Each verdict is a pure function of its arguments and of the engine that
renders them, so a build keeps it in a file (as Material's plugins keep theirs under
``.cache/plugin/<name>``) and the next build, or a ``mkdocs serve`` rebuild, reads it
instead of rendering again. Without a store (:func:`use` not called, or called with
``None``) nothing is read or written: the functions stay pure.

A verdict's key is the SHA-256 of the canonical JSON of:

* :data:`FORMAT`, the name of the function and its arguments (msgid, msgstr, the kind of
  block, the page's link definitions; or the page's Markdown, the digest of what it
  includes and the translations on it);
* the engine's fingerprint (:func:`fingerprint`): its extensions and their options
  (a function by its module and qualified name, a path as the path; a path inside the
  site's folder relative to it, so a copy or a moved checkout of the site, whose files
  are the same, reuses the verdicts: what a page includes counts by content, not by
  place, :mod:`po_i18n.includes`), the versions of
  Python, Python-Markdown, pymdown-extensions and Pygments, and the digest of the source
  of each extension's module and of this package. A change to anything that renders or
  judges makes new keys, so every verdict is computed again.

The file is JSON, written whole to a temporary file and renamed over the old one
(``os.replace`` is atomic on POSIX), merged with what another process wrote meanwhile; two
builds saving at once can lose each other's new verdicts (they are computed again), never
corrupt the file. It keeps the :data:`MAX_ENTRIES` most recently used verdicts. A file
that cannot be read is ignored and replaced.
"""
from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import logging
import os
import sys
import tempfile
from collections.abc import Callable, Mapping
from importlib import metadata
from pathlib import Path

__all__ = ["DEFAULT_FOLDER", "FORMAT", "for_project", "MAX_ENTRIES", "VerdictStore", "active", "fingerprint", "key", "remembered", "save", "tuples", "use"]

FORMAT = 1
DEFAULT_FOLDER = ".cache/plugin/po-i18n"  # relative to mkdocs.yml: the plugin's cache_dir default
MAX_ENTRIES = 50_000  # about 10 MB of JSON; the course has about 3,000 verdicts, each edit adds a few
FILE_NAME = "verdicts.json"
_DISTRIBUTIONS = ("markdown", "pymdown-extensions", "pygments")

log = logging.getLogger("mkdocs.plugins.po_i18n")


class VerdictStore:
    """The verdicts of one site, read from ``<folder>/verdicts.json`` on first use.

    Attributes:
        folder: where the file is (created on :meth:`save`).
        root: the site's folder (mkdocs.yml's), or ``None``: an option's path inside it
            is part of a key relative to it (:func:`fingerprint`).
        hits, misses: how many lookups found a verdict and how many did not, since the
            store was opened or last saved by :func:`save` (a warm build has no misses).
    """

    def __init__(self, folder: Path, root: Path | None = None) -> None:
        self.folder = Path(folder)
        self.root = None if root is None else Path(root)  # the site's folder: paths in options count from it
        self.hits = self.misses = 0
        self._entries: dict[str, object] | None = None
        self._used: dict[str, object] = {}
        self._computed: dict[str, object] = {}  # every verdict put since the store was opened
        self._adopted: dict[str, bool] = {}  # computed for this build elsewhere, not looked up yet
        self._new = False  # a verdict was computed since the last save

    @property
    def path(self) -> Path:
        return self.folder / FILE_NAME

    def _read(self) -> dict[str, object]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("verdicts"), dict):
            return {}
        return data["verdicts"]

    def get(self, key: str):
        """The stored verdict (JSON value) of ``key``, or ``None``."""
        if self._entries is None:
            self._entries = self._read()
        value = self._entries.get(key)
        if value is None or self._adopted.pop(key, False):
            self.misses += 1
        else:
            self.hits += 1
            self._used[key] = value
        return value

    def put(self, key: str, value) -> None:
        """Remember a verdict (a JSON value) until :meth:`save`."""
        if self._entries is None:
            self._entries = self._read()
        self._entries[key] = self._used[key] = self._computed[key] = value
        self._new = True

    def adopt(self, entries: Mapping[str, object]) -> None:
        """:meth:`put` verdicts another process computed for this build
        (:mod:`po_i18n.prejudge`): each counts as computed, not reused, at its first
        lookup, as if this process had computed it then."""
        for key, value in entries.items():
            self.put(key, value)
            self._adopted[key] = True

    def computed(self) -> dict[str, object]:
        """Every verdict :meth:`put` since the store was opened (key -> JSON value): what a
        worker process hands back to the build (:mod:`po_i18n.prejudge`)."""
        return dict(self._computed)

    def save(self) -> None:
        """Write the verdicts used or computed since the last save over the file, the
        most recent last, keeping at most :data:`MAX_ENTRIES`. Never raises: a store that cannot be written only costs the next build
        the time to judge again (logged at debug level). A store that computed nothing
        new leaves the file as it is (a warm build writes nothing)."""
        if not self._used or not self._new:
            return
        merged = self._read()
        for key in self._used:
            merged.pop(key, None)
        merged.update(self._used)
        if len(merged) > MAX_ENTRIES:
            merged = dict(list(merged.items())[-MAX_ENTRIES:])
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=self.folder, prefix=".verdicts-",
                                             suffix=".json", delete=False) as out:
                json.dump({"format": FORMAT, "verdicts": merged}, out, ensure_ascii=False, separators=(",", ":"))
            os.chmod(out.name, 0o644)  # as a file the build writes; the temporary file is 0600
            os.replace(out.name, self.path)
        except OSError as exc:
            log.debug(f"po-i18n: cannot write the verdict cache {self.path}: {exc}")
            return
        self._entries, self._used, self._new = merged, {}, False


_store: VerdictStore | None = None


def use(folder: Path | str | None, root: Path | str | None = None) -> VerdictStore | None:
    """Keep verdicts in ``folder`` from now on (the same store while the folder and
    ``root``, the site's folder, are the same), or in no file with ``None``. Returns the
    store in use."""
    global _store
    if folder is None:
        _store = None
    elif _store is None or _store.folder != Path(folder) or _store.root != (None if root is None else Path(root)):
        _store = VerdictStore(Path(folder), root)
    return _store


def for_project(project) -> VerdictStore | None:
    """:func:`use` the store a site's mkdocs.yml asks for (the po-i18n plugin's ``cache``
    and ``cache_dir`` options, read by :class:`po_i18n.project.Project`), for the command
    line: ``po-i18n check`` and ``stats`` share the build's verdicts."""
    options = project.options or {}
    return use(project.root / options.get("cache_dir", DEFAULT_FOLDER) if options.get("cache", True) else None,
               project.root)


def active() -> VerdictStore | None:
    """The store in use, or ``None``."""
    return _store


def save() -> None:
    """:meth:`VerdictStore.save` of the store in use, if any; logs (debug level, so
    ``mkdocs build -v`` shows it) how many verdicts were reused and computed."""
    if _store is not None:
        log.debug(f"po-i18n: verdict cache {_store.path}: {_store.hits} reused, {_store.misses} computed")
        _store.save()
        _store.hits = _store.misses = 0


def _canonical(value, root: str | None = None):
    """Extension options as JSON can hold them, the same in every process: a mapping
    sorted, a path as its path (inside ``root``, the site's folder, as ``$root/`` and the
    path from there), a function by module and qualified name, anything else by its
    ``repr`` (an object whose repr holds an address then never matches: its verdicts are
    computed again, never wrongly reused)."""
    if isinstance(value, Mapping):
        return {str(k): _canonical(v, root) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple)):
        return [_canonical(v, root) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, os.PathLike):
        try:
            path = os.path.normpath(os.fspath(value))
        except Exception:  # noqa: BLE001 - MkDocs placeholders outside a build
            return repr(value)
        if root is not None and (path == root or path.startswith(root.rstrip(os.sep) + os.sep)):
            return ["path", "$root/" + os.path.relpath(path, root).replace(os.sep, "/")]
        return ["path", path]
    if callable(value) and hasattr(value, "__qualname__"):
        return ["callable", getattr(value, "__module__", ""), value.__qualname__]
    return repr(value)


def _module_digest(name: str) -> str:
    """SHA-256 of the source of the module an extension name loads (``toc`` is
    ``markdown.extensions.toc``, ``pkg.mod:Class`` is ``pkg.mod``); ``""`` if not found."""
    module = name.split(":")[0]
    for candidate in (module, f"markdown.extensions.{module}"):
        try:
            spec = importlib.util.find_spec(candidate)
        except (ImportError, ValueError):
            spec = None
        if spec is not None and spec.origin and os.path.isfile(spec.origin):
            return hashlib.sha256(Path(spec.origin).read_bytes()).hexdigest()
    return ""


@functools.lru_cache(maxsize=1)
def _own_digest() -> str:
    """SHA-256 of this package's Python sources (so an edited check never reuses a verdict)."""
    digest = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return ""


@functools.lru_cache(maxsize=64)
def fingerprint(engine, root: Path | str | None = None) -> str:
    """What a verdict depends on besides its arguments, as a hex SHA-256: the engine's
    extensions and options (:class:`po_i18n.markdown_engine.MarkdownEngine`; a path
    inside ``root``, the site's folder, counted from it, so two copies of a site share
    their verdicts), the versions of Python and of the Markdown libraries, the source of
    each extension's module and of po_i18n."""
    base = None if root is None else os.path.normpath(os.path.abspath(root))
    parts = [sys.version, [_version(d) for d in _DISTRIBUTIONS], _own_digest(), list(engine.extensions),
             _canonical(dict(engine.configs), base), [_module_digest(n) for n in engine.extensions]]
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=repr).encode()).hexdigest()


def key(name: str, engine, args: tuple, root: Path | str | None = None) -> str:
    """The key of ``name(engine, *args)``'s verdict (hex SHA-256), the engine's paths
    inside ``root`` (the site's folder) counted from it (:func:`fingerprint`)."""
    text = json.dumps([FORMAT, name, fingerprint(engine, root), args], ensure_ascii=False, sort_keys=True,
                      default=_canonical)
    return hashlib.sha256(text.encode()).hexdigest()


def tuples(value):
    """A JSON value with every list a tuple again: a stored verdict as it was computed."""
    return tuple(tuples(v) for v in value) if isinstance(value, list) else value


def remembered(name: str, decode: Callable = tuples) -> Callable:
    """Decorate a pure function ``f(engine, *args)`` whose value is JSON-able (tuples of
    strings, nested): with a store in use, a stored verdict is returned (through
    ``decode``, which turns the JSON value back into the function's type) and a computed
    one is stored. The undecorated function is ``.compute``."""
    def wrap(compute: Callable) -> Callable:
        @functools.wraps(compute)
        def verdict(engine, *args):
            store = _store
            if store is None:
                return compute(engine, *args)
            k = key(name, engine, args, store.root)
            found = store.get(k)
            if found is not None:
                return decode(found)
            value = compute(engine, *args)
            store.put(k, value)
            return value
        verdict.compute = compute
        return verdict
    return wrap
