"""Judge a cold build's translations on every core, before the build reads the verdicts.

A build with an empty verdict store (a fresh clone, a new engine version) judges every
translation of every language and checks every page's translations together
(:func:`po_i18n.check.check_catalog`): about as long as rendering the whole site. The
verdicts are pure functions of their arguments (:mod:`po_i18n.verdicts`), so they can be
computed in any process and in any order: :func:`prejudge` deals the catalogs out in
as many parts as there are cores, judges one part itself and forks a worker for each other
part (``multiprocessing``'s ``fork`` start method, so each worker has the build's engine
and check as they are, nothing pickled but the verdicts coming back), and puts what the
workers computed into the build's store. The build then checks every catalog as before,
one after the other, and finds every verdict there: the same
warnings in the same order, the same pages. A warm store is left alone (no worker starts),
and so is a machine of one core, a platform without ``fork``, or a process running other
threads (``mkdocs serve``).
"""
from __future__ import annotations

import multiprocessing
import os
import threading
from pathlib import Path

from . import catalog as po
from . import verdicts
from .check import check_catalog

__all__ = ["prejudge", "workers"]

# The job the forked workers inherit: (project, the parts of the catalogs, check, count).
# Set just before the pool forks, cleared after; a worker reads its copy of this memory.
_job: tuple | None = None


def workers() -> int:
    """How many processes may judge at once: the cores this process may run on
    (``os.sched_getaffinity``; ``os.cpu_count()`` where there is no such call)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _cold(store: verdicts.VerdictStore, project, paths: list[Path], check) -> bool:
    """Whether verdicts are missing: the store has no file yet (a fresh clone), or the
    smallest catalog has a verdict missing from it (judged here to see: a warm store
    answers from memory, and nothing is forked)."""
    if not store.path.is_file():
        return True
    before = store.misses
    for path in sorted(paths, key=lambda p: p.stat().st_size if p.is_file() else 0):
        if po.load_cached(path) is not None:
            check_catalog(project, path, check)
            return store.misses > before
    return False


def _parts(paths: list[Path], count: int) -> list[list[Path]]:
    """The catalogs in ``count`` parts of about the same size (bytes), each page's
    catalogs of every language in one part: they share its English side (its messages
    rendered, its page segmented), which each process computes once for all of them.
    Largest page first, each to the part with the fewest bytes so far."""
    pages: dict[str, list[Path]] = {}
    for path in paths:
        pages.setdefault(path.name, []).append(path)
    size = {name: sum(p.stat().st_size for p in group if p.is_file()) for name, group in pages.items()}
    parts: list[list[Path]] = [[] for _ in range(count)]
    load = [0] * count
    for name in sorted(pages, key=lambda n: size[n], reverse=True):
        emptiest = load.index(min(load))
        parts[emptiest] += pages[name]
        load[emptiest] += size[name]
    return parts


def _judge(part: int) -> dict[str, object]:
    """In a worker (or this process, part 0): check the catalogs of one part
    (:func:`_parts`); returns the verdicts it computed (key -> JSON value). Anything that
    goes wrong is left to the build's own pass, which reports it where it belongs."""
    project, parts, check, _ = _job
    store = verdicts.active()
    if store is None:
        return {}
    known = store.computed()  # what the parent had computed before it forked
    try:
        for path in parts[part]:
            check_catalog(project, path, check)
    except Exception:  # noqa: BLE001 - the build's serial pass meets the same error and names it
        pass
    return {key: value for key, value in store.computed().items() if key not in known}


def prejudge(project, languages: list[str], check, processes: int | None = None) -> int:
    """Compute the missing verdicts of every catalog of ``languages`` in parallel and put
    them in the store in use.

    Args:
        project: the :class:`po_i18n.project.Project`.
        languages: the translation languages being built.
        check: the build's :class:`po_i18n.check.TranslationCheck`
            (``build_context.check_of``).
        processes: how many workers at most (default: :func:`workers`).

    Returns:
        How many verdicts this process and the workers computed; 0 when nothing was
        forked (no store, a warm store, one core, other threads, no ``fork`` start
        method, or a single catalog).

    Raises:
        po_i18n.catalog.CatalogError: the catalog probed for missing verdicts (the
            smallest) cannot be read, as the build's own check would raise.
    """
    global _job
    store = verdicts.active()
    paths = [path for language in languages for path in project.catalog_files(language)]
    count = min(processes or workers(), len(paths))
    # Forking copies only the calling thread: with others running (mkdocs serve's server
    # and watcher), a lock one of them holds would stay locked in the workers.
    if (store is None or count < 2 or threading.active_count() > 1
            or "fork" not in multiprocessing.get_all_start_methods()):
        return 0
    if not _cold(store, project, paths, check):
        return 0
    _job = (project, _parts(paths, count), check, count)
    try:  # this process judges the first part while count - 1 forked ones judge the others
        with multiprocessing.get_context("fork").Pool(count - 1) as pool:
            others = pool.map_async(_judge, range(1, count))
            mine = _judge(0)  # already in this process's store
            parts = others.get()
    finally:
        _job = None
    for computed in parts:
        store.adopt(computed)
    return len(mine) + sum(map(len, parts))
