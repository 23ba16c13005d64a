"""Values computed from files, kept until one of those files changes.

A build asks the same questions many times (every page of every language, and again on
each ``mkdocs serve`` rebuild): the parsed catalog, a program's local imports, a file's
digest, the verification records. :class:`StatCache` answers them from memory while the
modification time and size of every file the answer came from are unchanged.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Generic, TypeVar

__all__ = ["StatCache", "stamps"]

T = TypeVar("T")


def stamps(files: tuple[Path, ...]) -> tuple[tuple[int, int] | None, ...]:
    """``(st_mtime_ns, st_size)`` of each file, ``None`` for one that is gone."""
    out = []
    for path in files:
        try:
            st = path.stat()
        except FileNotFoundError:
            out.append(None)
        else:
            out.append((st.st_mtime_ns, st.st_size))
    return tuple(out)


class StatCache(Generic[T]):
    """``cache(path)`` is ``compute(path)``, recomputed only when a file it used changed.

    Args:
        compute: builds the value from the file; may raise (nothing is cached then).
        sources: the files the value was built from, given the path and the value
            (default: the path alone), e.g. a program and every module it imports.
    """

    def __init__(self, compute: Callable[[Path], T],
                 sources: Callable[[Path, T], Iterable[Path]] = lambda path, value: (path,)) -> None:
        self._compute, self._sources = compute, sources
        self._hits: dict[Path, tuple[tuple, T, tuple[Path, ...]]] = {}

    def __call__(self, path: Path) -> T:
        hit = self._hits.get(path)
        if hit is not None and stamps(hit[2]) == hit[0]:
            return hit[1]
        files = (path,)
        before = stamps(files)
        value = self._compute(path)
        files = tuple(dict.fromkeys((path, *self._sources(path, value))))
        stamped = before + stamps(files[1:])  # the path as it was when it was read
        self._hits[path] = (stamped, value, files)
        return value
