"""``course bench``: what building and verifying the course costs, each against its floor.

Every figure is measured in the same run as its floor, so ratios hold on a noisy machine:

* build: the five-language ``mkdocs build`` with the project's hooks vs the same build
  with ``hooks: []`` (plain MkDocs + Material + mkdocs-static-i18n on the same pages: the
  program pages the hooks generate are Markdown files there, :func:`_plain_docs`);
  and the cost of :func:`po_i18n.render.render` per page;
* reload: from saving a page, a catalog or a snippet to the rebuilt page being served by
  ``mkdocs serve``;
* preview: the same for a translator's catalog edit, under the five-language preview and
  under the one-language one (``po-i18n serve --lang sv``), at 1x and 50x the pages;
* scale: the course replicated to 10x and 50x its pages (generated in a temporary
  folder): seconds per page and peak memory against the page count;
* fuzz-segment: the segmenter's differential fuzzer on 20,000 random pages (not a
  time: it reports a counterexample or none);
* snippets: the snippet suite cold (``--reverify``) serially and in ``-n`` lanes, warm
  (nothing changed), against the serial floor: the same number of ``torchrun`` jobs with
  the same process counts, each only importing torch and creating and destroying its
  process group;
* check: the safety check (:mod:`po_i18n.safety`) per message, cold (nothing judged
  yet, the English side rendered too) and warm (remembered), over every translation;
* fuzz (only with ``--only fuzz``, about half an hour on two cores): the fuzz property of
  the safety check (:mod:`po_i18n.fuzz_safety`) over at least ``--fuzz-translations``
  mutated translations, in seeded runs of 500 examples.
* flakes: every program's bare run (the page's launch line, no harness) ten times, and
  how many of those runs failed.

Each figure is the minimum and median of several runs (``--repeat``); times in seconds,
memory in MiB. Results are printed as one table, each figure with its aim and its minimum
in the last earlier run that measured it, and written as JSON (``bench.json``) with the
earlier runs of that file under ``history`` (at most :data:`HISTORY`, newest first, each
with its time and commit).
"""
from __future__ import annotations

import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from importlib import metadata
from pathlib import Path

from mkdocs.utils import get_markdown_title
from po_i18n import catalog as po
from po_i18n import page_guard, safety
from po_i18n.check import judged, project_check
from po_i18n.project import Project
from po_i18n.render import render

from .net import free_port
from .runspec import launch_shape, read_spec

__all__ = ["run_bench"]

PYTHON = sys.executable
ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONUNBUFFERED": "1"}
FLOOR_PROGRAM = '''import torch, torch.distributed as dist
dist.init_process_group("gloo")
dist.destroy_process_group()
'''


def _stat(samples: list[float]) -> dict:
    return {"min": min(samples), "median": statistics.median(samples), "runs": len(samples)}


def _timed(cmd: list[str], cwd: Path, env: dict | None = None) -> tuple[float, float]:
    """Run a command; (wall seconds, peak resident MiB of the process tree's largest child)."""
    with tempfile.TemporaryFile() as log:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env or ENV, stdout=log, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status) != 0:
            log.seek(0)
            tail = log.read().decode(errors="replace")[-3000:]
            raise RuntimeError(f"{' '.join(cmd)} failed in {cwd}:\n{tail}")
    return wall, usage.ru_maxrss / 1024.0  # Linux reports KiB


def _copy_project(root: Path, into: Path) -> Path:
    target = into / "project"
    target.mkdir()
    for item in ("mkdocs.yml", "docs", "i18n", "snippets", "hooks"):
        src = root / item
        if src.is_dir():
            shutil.copytree(src, target / item, ignore=shutil.ignore_patterns("__pycache__", "*.pt"))
        else:
            shutil.copy(src, target / item)
    return target


# The plain build's pages: docs/ and, as Markdown files, the pages the hooks generate.
PLAIN_DOCS = "docs-plain"


def _without_hooks(config_file: Path) -> Path:
    """A copy of mkdocs.yml with ``hooks: []`` and without the po-i18n plugin next to it (so
    relative paths still hold): plain MkDocs + Material + mkdocs-static-i18n, reading its
    pages from :data:`PLAIN_DOCS` (:func:`_plain_docs`)."""
    text = config_file.read_text(encoding="utf-8")
    text = re.sub(r"(?m)^hooks:\n(?:  - .*\n)+", "hooks: []\n", text)
    text = re.sub(r"(?m)^docs_dir: .*$", f"docs_dir: {PLAIN_DOCS}", text)
    text = re.sub(r"(?m)^  - po-i18n:.*\n(?:(?:      .*|  #.*)?\n)*", "", text)  # the plugin and its options
    text = re.sub(r"(?m)^  - translation-status\.md.*\n", "", text)  # generated by the plugin
    plain = config_file.with_name("mkdocs-plain.yml")
    plain.write_text(text, encoding="utf-8")
    return plain


def _plain_docs(project: Path) -> Path:
    """The plain build's pages: a copy of ``docs/`` plus every program page the course's
    hooks generate (``hooks/program_pages.py``), written as the English Markdown the hook
    gives them, with its front matter (no navigation, not indexed), and the files they
    offer. mkdocs-static-i18n then renders every page in every language (English where no
    translation exists), so both builds render the same pages and the ratio is the hooks'
    cost, not the cost of pages only one build has. Returns the folder.
    """
    from po_i18n.interface import interface_for

    from .gate import shown_programs
    from .programs import bundle, page_markdown, program

    docs, snippets = project / "docs", project / "snippets"
    target = project / PLAIN_DOCS
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(docs, target)
    pages = {p.relative_to(docs).as_posix(): p.read_text(encoding="utf-8-sig") for p in docs.rglob("*.md")
             if "overrides" not in p.relative_to(docs).parts and p.stem.count(".") == 0}
    english = interface_for(None)
    for name, shown in shown_programs(pages, snippets).items():
        prog = program(name, snippets)
        # each lesson's h1 as its page shows it: without its attribute list ({ #id })
        lessons = [(uri, re.sub(r"\s*\{[^}]*\}\s*$", "", get_markdown_title(pages[uri]) or uri)) for uri in shown]
        front = "---\nhide:\n  - navigation\nsearch:\n  exclude: true\n---\n\n"
        page = target / prog.page
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(front + page_markdown(prog, snippets, english, lessons), encoding="utf-8")
        for file, download in zip(prog.files, prog.downloads):
            shutil.copyfile(snippets / file, target / download)
        if prog.bundle is not None:
            (target / prog.bundle).write_bytes(bundle(prog, snippets))
    return target


VERDICT_CACHE = Path(".cache/plugin/po-i18n")  # the po-i18n plugin's default cache_dir


def bench_build(project: Path, repeat: int) -> dict:
    """Hook overhead: the full build with the project's hooks, cold (the po-i18n plugin's
    verdict cache removed first: a fresh clone) and warm (the cache the previous build
    left), and without them, interleaved."""
    plain = _without_hooks(project / "mkdocs.yml")
    _plain_docs(project)
    cold, warm, bare = [], [], []
    for _ in range(repeat):
        for config, out in ((project / "mkdocs.yml", cold), (project / "mkdocs.yml", warm), (plain, bare)):
            if out is cold:
                shutil.rmtree(project / VERDICT_CACHE, ignore_errors=True)
            wall, _ = _timed([PYTHON, "-m", "mkdocs", "build", "-q", "-f", str(config), "-d", str(project / "site-bench")], project)
            out.append(wall)
    return {"cold_s": _stat(cold), "warm_s": _stat(warm), "without_hooks_s": _stat(bare),
            "cold_ratio": min(cold) / min(bare), "warm_ratio": min(warm) / min(bare),
            "aim_cold_ratio": 1.5, "aim_warm_ratio": 1.15}


def bench_render(project: Path, repeat: int) -> dict:
    """Seconds per page of render() with each language's catalog (in-process), with the
    safety check's judgements already made (as in a build, after on_pre_build)."""
    proj = Project.load(project / "mkdocs.yml")
    check = project_check(proj)
    jobs = []
    for page in proj.pages():
        source = (proj.docs_dir / page).read_text(encoding="utf-8")
        for language in proj.languages:
            path = proj.catalog_path(language, page)
            jobs.append((source, po.translations(po.load_cached(path)), check.page(source).accept))
    samples = []
    for _ in range(max(repeat, 5)):
        start = time.perf_counter()
        for source, table, accept in jobs:
            render(source, table, accept=accept, fallback_lang=proj.default_language, engine=proj.engine)  # as the hook calls it
        samples.append((time.perf_counter() - start) / len(jobs))
    return {"pages": len(jobs), "per_page_s": _stat(samples)}


def bench_check(project: Path, repeat: int) -> dict:
    """Seconds per message of the safety check over every translation of every catalog:
    cold (caches cleared: each msgid and msgstr rendered) and warm (remembered)."""
    proj = Project.load(project / "mkdocs.yml")
    project_check(proj)  # load mkdocs.yml once, outside the timing
    catalogs = [path for language in proj.languages for path in proj.catalog_files(language)]
    cold, warm, messages = [], [], 0
    for _ in range(repeat):
        safety.clear_caches()
        page_guard.clear_caches()
        check = project_check(proj)
        start = time.perf_counter()
        messages = sum(len(list(judged(proj, path, po.load_cached(path), check))) for path in catalogs)
        cold.append((time.perf_counter() - start) / messages)
        start = time.perf_counter()
        sum(len(list(judged(proj, path, po.load_cached(path), check))) for path in catalogs)
        warm.append((time.perf_counter() - start) / messages)
    return {"messages": messages, "cold_per_message_s": _stat(cold), "warm_per_message_s": _stat(warm)}


FUZZ_MESSAGES = 80  # translations mutated per page rendering in the long run (the test: po_i18n.fuzz_safety.MAX_MESSAGES)


def bench_fuzz(root: Path, translations: int) -> dict:
    """The fuzz property over at least ``translations`` mutated translations (seeded runs
    of 500 Hypothesis examples, seeds 0, 1, …, up to :data:`FUZZ_MESSAGES` translations
    of one page each); the count of accepted translations that changed a page's
    structure must be 0."""
    from po_i18n.fuzz_safety import FuzzReport, corpus, families_table, run_fuzz  # needs Hypothesis (the test extra)

    pages = sorted((root / "tests" / "unit" / "pages").glob("*.md"))
    fuzz_corpus = corpus(Project.load(root / "mkdocs.yml"), pages)
    report, seed, shown = FuzzReport(), 0, 0
    while report.tried < translations:
        run_fuzz(fuzz_corpus, 500, seed=seed, report=report, stop_on_failure=False, max_messages=FUZZ_MESSAGES)
        seed += 1
        print(f"fuzz, seeds 0-{seed - 1}: {report.line()}", flush=True)
        for failure in report.failures[shown:]:  # as they come: a long run stopped early keeps them
            print(f"fuzz failure (seed {seed - 1}): {failure}", file=sys.stderr, flush=True)
        shown = len(report.failures)
    print(families_table(report))
    return {"examples": report.examples, "tried": report.tried, "accepted": report.accepted,
            "rejected": report.rejected, "accepted_but_structure_changed": report.changed, "pages_rendered": report.renders,
            "seconds": report.seconds, "seeds": seed, "families": report.families, "failures": report.failures}


def bench_fuzz_segment(examples: int = 20000, seed: int = 0) -> dict:
    """The differential fuzzer of the segmenter (:mod:`po_i18n.fuzz`) on ``examples``
    random pages: properties (a)-(d) against the default engine. Stops at the first
    counterexample, which it reports shrunk."""
    from hypothesis import HealthCheck, given, seed as hypothesis_seed, settings

    from po_i18n.fuzz import RAW_WORDS, check, documents

    seen = [0]
    start = time.perf_counter()

    @hypothesis_seed(seed)
    @settings(max_examples=examples, deadline=None, database=None, print_blob=False,
              suppress_health_check=list(HealthCheck))
    @given(documents())
    def run(page):
        seen[0] += 1
        if seen[0] % 1000 == 0:
            print(f"fuzz-segment: {seen[0]} pages, {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
        check(page, raw_words=RAW_WORDS)

    failure = None
    try:
        run()
    except AssertionError as exc:
        failure = "\n".join([str(exc), *getattr(exc, "__notes__", [])])
    wall = time.perf_counter() - start
    return {"examples": seen[0], "seed": seed, "seconds": wall, "counterexample": failure}


def _wait_for(url: str, marker: str | None, timeout: float, present: bool = True) -> float:
    """Poll a URL until it answers and contains ``marker`` (or, with ``present=False``,
    no longer contains it); return when that happened."""
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=10) as response:
                body = response.read().decode("utf-8", errors="replace")
            if marker is None or (marker in body) == present:
                return time.perf_counter()
        except OSError:
            pass
        time.sleep(0.05)
    raise TimeoutError(f"{url} did not show {marker!r} within {timeout} s")


def _serve(project: Path, env: dict | None = None, ready: str = "ru/ddp-basics/", timeout: float = 120,
           options: tuple[str, ...] = ()) -> tuple[subprocess.Popen, int]:
    """``mkdocs serve`` (with ``options``) of a project on a free port, once ``ready`` is served."""
    port = free_port()
    env = {**ENV, "SITE_URL": f"http://127.0.0.1:{port}/", **(env or {})}
    cmd = [PYTHON, "-m", "mkdocs", "serve", *options, "-a", f"127.0.0.1:{port}"]
    server = subprocess.Popen(cmd, cwd=project, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    _wait_for(f"http://127.0.0.1:{port}/{ready}", None, timeout)
    return server, port


def bench_reload(project: Path, repeat: int) -> dict:
    """Seconds from saving an edit to the rebuilt page being served, per kind of edit,
    under a plain ``mkdocs serve`` (full rebuild).

    ``--dirty`` is not used: it rebuilds only pages whose own source is newer than their
    output, so it misses catalog and snippet edits (the page's Markdown did not change)
    and, by mtime, an edit saved while the previous rebuild was still writing.
    """
    page = project / "docs" / "ddp-basics.md"
    catalog = project / "i18n" / "ru" / "ddp-basics.po"
    snippet = project / "snippets" / "ddp_basics" / "train.py"
    edits = (
        ("docs page", page, "ddp-basics/", lambda s, m: s.replace("## Recap { #recap }", f"## Recap {m} {{ #recap }}", 1)),
        ("catalog", catalog, "ru/ddp-basics/", lambda s, m: s.replace('msgstr "Итоги"', f'msgstr "Итоги {m}"', 1)),
        ("snippet", snippet, "ddp-basics/", lambda s, m: s.replace("# a new shuffle each epoch", f"# a new shuffle each epoch {m}", 1)),
    )
    results: dict[str, list[float]] = {kind: [] for kind, *_ in edits}
    server, port = _serve(project)
    try:
        for n in range(repeat):
            for kind, path, url, edit in edits:
                marker = f"benchmark{n}{kind[0]}{time.time_ns() % 100000}"
                text = path.read_text(encoding="utf-8")
                edited = edit(text, marker)
                if edited == text:
                    raise RuntimeError(f"bench: could not plant an edit in {path}")
                time.sleep(0.5)  # let the watcher settle after the previous rebuild
                saved = time.perf_counter()
                path.write_text(edited, encoding="utf-8")
                results[kind].append(_wait_for(f"http://127.0.0.1:{port}/{url}", marker, 120) - saved)
                path.write_text(text, encoding="utf-8")
                _wait_for(f"http://127.0.0.1:{port}/{url}", marker, 120, present=False)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    return {kind: _stat(samples) for kind, samples in results.items()} | {"aim_s": 2.0}


def bench_preview(root: Path, repeat: int, factors: tuple[int, ...] = (1, 50), language: str = "sv") -> dict:
    """Seconds from saving a catalog of one language to its rebuilt page under ``mkdocs
    serve``: every language built by a full rebuild (``mkdocs serve``) against English and
    that language only as ``po-i18n serve --lang`` runs it (``PO_I18N_PREVIEW_LANGUAGES``
    and ``--dirty``: only the edited page is rendered again), with the course
    replicated to each factor of its pages (as in the scale part).

    Each sample is one rebuild: the edit changes the marker the previous one planted.

    Returns:
        ``{"language": ..., "rows": [{"factor", "pages", "built", "catalog_s"}, ...]}``;
        ``pages`` per language, ``built`` the languages each rebuild builds.
    """
    rows = []
    for factor in factors:
        with tempfile.TemporaryDirectory(prefix="course-bench-") as tmp:
            project = _copy_project(root, Path(tmp))
            pages = _replicate(project, factor)
            everything = 1 + len(Project.load(project / "mkdocs.yml").languages)
            catalog = project / "i18n" / language / "ddp-basics.po"
            original = catalog.read_text(encoding="utf-8")
            anchor = re.search(r'msgid "Recap"\nmsgstr "([^"]+)"', original)
            if anchor is None:
                raise RuntimeError(f"bench: no translated 'Recap' heading in {catalog} to edit")
            url = f"{language}/ddp-basics/"
            limit = 300 + 10.0 * pages  # a 50x rebuild of five languages: about a minute on an idle machine
            for built, env, options in ((everything, {}, ()), (2, {"PO_I18N_PREVIEW_LANGUAGES": language}, ("--dirty",))):
                server, port = _serve(project, env, url, limit, options)
                samples = []
                try:
                    for n in range(repeat):
                        marker = f"benchmark{n}x{time.time_ns() % 100000}"
                        edited = original[:anchor.end(1)] + f" {marker}" + original[anchor.end(1):]
                        time.sleep(0.5)  # let the watcher settle after the previous rebuild
                        saved = time.perf_counter()
                        catalog.write_text(edited, encoding="utf-8")
                        samples.append(_wait_for(f"http://127.0.0.1:{port}/{url}", marker, limit) - saved)
                finally:
                    catalog.write_text(original, encoding="utf-8")
                    os.killpg(server.pid, signal.SIGTERM)
                    server.wait(timeout=30)
                rows.append({"factor": factor, "pages": pages, "built": built, "catalog_s": _stat(samples)})
                print(f"preview x{factor}, {built} languages built: catalog reload {samples} s", flush=True)
    return {"language": language, "rows": rows, "aim_s": {"1": 2.0, "50": 10.0}}


def _replicate(project: Path, factor: int) -> int:
    """Add copies of every page and its catalogs (factor - 1 of each); return the page count."""
    proj = Project.load(project / "mkdocs.yml")
    pages = [p for p in proj.pages()]
    for n in range(1, factor):
        for page in pages:
            if page.stem == "index":
                continue
            copy = page.with_name(f"{page.stem}-copy{n}.md")
            shutil.copy(proj.docs_dir / page, proj.docs_dir / copy)
            for language in proj.languages:
                src = proj.catalog_path(language, page)
                if src.is_file():
                    shutil.copy(src, proj.catalog_path(language, copy))
    return len(proj.pages())


def bench_scale(root: Path, factors: tuple[int, ...]) -> dict:
    """Build time per page and peak memory as the course grows (pages x languages)."""
    rows = []
    for factor in factors:
        with tempfile.TemporaryDirectory(prefix="course-bench-") as tmp:
            project = _copy_project(root, Path(tmp))
            pages = _replicate(project, factor)
            wall, rss = _timed([PYTHON, "-m", "mkdocs", "build", "-q", "-d", str(project / "site-bench")], project)
            languages = 1 + len(Project.load(project / "mkdocs.yml").languages)
            rows.append({"factor": factor, "pages": pages * languages, "build_s": wall,
                         "per_page_ms": 1000 * wall / (pages * languages), "peak_rss_mib": rss})
    xs = [r["pages"] for r in rows]
    ys = [r["build_s"] for r in rows]
    slope = statistics.linear_regression(xs, ys).slope if len(rows) > 1 else float("nan")
    return {"rows": rows, "slope_s_per_page": slope,
            "per_page_ratio_largest_vs_smallest": rows[-1]["per_page_ms"] / rows[0]["per_page_ms"],
            "memory_ratio_vs_page_ratio": (rows[-1]["peak_rss_mib"] / rows[0]["peak_rss_mib"]) / (xs[-1] / xs[0])}


def _snippet_jobs(root: Path) -> list[int]:
    """Processes per job of every launch command of every snippet program."""

    counts = []
    for program in sorted((root / "snippets").rglob("*.py")):
        try:
            spec = read_spec(program)
        except Exception:  # noqa: BLE001 - helper modules have no launch spec
            continue
        if spec.cuda_gpus:
            continue
        for line in spec.lines:
            counts.append(launch_shape(line, program.parent)[0])  # a batch script's torchrun too
    return counts


def bench_snippets(root: Path, repeat: int) -> dict:
    """Snippet suite cold (serial and in lanes) and warm, against the serial floor."""
    cores = os.cpu_count() or 1
    tests = ["tests/snippets"]
    cold = {}
    for lanes in range(1, cores + 1):
        args = ["-p", "no:xdist"] if lanes == 1 else ["-n", str(lanes), "--dist", "loadfile"]
        cold[f"n={lanes}"] = _stat([_timed([PYTHON, "-m", "pytest", "-q", "--reverify", *args, *tests], root)[0]])
    warm = _stat([_timed([PYTHON, "-m", "pytest", "-q", "-p", "no:xdist", *tests], root)[0] for _ in range(repeat)])
    jobs = _snippet_jobs(root)
    torchrun = str(Path(PYTHON).with_name("torchrun"))
    with tempfile.TemporaryDirectory(prefix="course-floor-") as tmp:
        (Path(tmp) / "floor.py").write_text(FLOOR_PROGRAM, encoding="utf-8")
        start = time.perf_counter()
        for nproc in jobs:
            _timed([torchrun, "--standalone", f"--nproc-per-node={nproc}", "floor.py"], Path(tmp), {**ENV, "OMP_NUM_THREADS": "1"})
        floor = time.perf_counter() - start
    best = min(v["min"] for v in cold.values())
    return {"jobs": len(jobs), "serial_floor_s": floor, "cold_s": cold, "warm_s": warm,
            "best_cold_vs_floor": best / floor, "aim_vs_floor": 1.0, "aim_warm_s": 3.0}


def bench_flakes(root: Path, runs: int = 10) -> dict:
    """Flake rate per program: its bare-run test (the page's launch line as a reader runs
    it, ``tests/conftest.py``'s ``bare_run_test``) run ``runs`` times, every check
    included, with records left untouched (``--no-record``)."""
    import xml.etree.ElementTree as ET

    with tempfile.TemporaryDirectory(prefix="course-flakes-") as tmp:
        report = Path(tmp) / "junit.xml"
        _timed([PYTHON, "-m", "pytest", "-q", "--reverify", "--no-record", f"--bare-runs={runs}", "-n", str(os.cpu_count() or 1),
                "--dist", "loadfile", "-k", "bare_run", f"--junitxml={report}", "tests/snippets"], root)
        per_program: dict[str, dict] = {}
        for case in ET.parse(report).getroot().iter("testcase"):
            if not case.get("name", "").startswith("test_bare_run"):
                continue
            program = case.get("classname", "")
            row = per_program.setdefault(program, {"runs": 0, "failed": 0, "skipped": 0})
            if case.find("skipped") is not None:
                row["skipped"] += 1
                continue
            row["runs"] += 1
            if case.find("failure") is not None or case.find("error") is not None:
                row["failed"] += 1
    for row in per_program.values():
        row["flake_rate"] = row["failed"] / row["runs"] if row["runs"] else None
    return {"runs_per_program": runs, "programs": dict(sorted(per_program.items()))}


def _versions() -> dict:
    names = ("mkdocs", "mkdocs-material", "mkdocs-static-i18n", "pymdown-extensions", "markdown-it-py", "polib", "torch", "pytest")
    found = {}
    for name in names:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return {"python": platform.python_version(), "cores": os.cpu_count(), "machine": platform.machine(), **found}


def _table(results: dict, earlier: list[dict] = ()) -> str:
    """The results as one table, each figure against its aim; with ``earlier`` results
    (newest first, as kept in bench.json's ``history``), the newest earlier minimum of
    each figure in a last column, so a regression shows."""
    rows = _rows(results)
    before: dict[str, str] = {}
    for old in reversed(list(earlier)):
        before.update({row[0]: f"{row[1]} ({old.get('when', '?')[:10]})" for row in _rows(old)[1:] if row[1]})
    if before:
        rows = [(*rows[0], "last run")] + [(*row, before.get(row[0], "")) for row in rows[1:]]
    columns = len(rows[0])
    widths = [max(len(str(row[i])) for row in rows) for i in range(columns)]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    v = results["versions"]
    lines.append(f"\n{v['cores']} cores, {v['machine']}, Python {v['python']}, torch {v['torch']}, mkdocs {v['mkdocs']}, "
                 f"material {v['mkdocs-material']}, static-i18n {v['mkdocs-static-i18n']}")
    return "\n".join(lines)


def _rows(results: dict) -> list[tuple[str, str, str, str]]:
    """``(figure, min, median, note)`` per figure of one run's results, header first."""
    rows = [("figure", "min", "median", "note")]
    b = results.get("build")
    if b:
        rows.append(("build, 5 languages, hooks, cold cache (s)", f"{b['cold_s']['min']:.2f}", f"{b['cold_s']['median']:.2f}", ""))
        rows.append(("build, 5 languages, hooks, warm cache (s)", f"{b['warm_s']['min']:.2f}", f"{b['warm_s']['median']:.2f}", ""))
        rows.append(("build, same pages, hooks off (s)", f"{b['without_hooks_s']['min']:.2f}", f"{b['without_hooks_s']['median']:.2f}", ""))
        rows.append(("hook overhead, cold (ratio of minima)", f"{b['cold_ratio']:.3f}", "", f"aim <= {b['aim_cold_ratio']}"))
        rows.append(("hook overhead, warm (ratio of minima)", f"{b['warm_ratio']:.3f}", "", f"aim <= {b['aim_warm_ratio']}"))
    r = results.get("render")
    if r:
        rows.append((f"render() per page ({r['pages']} pages) (ms)", f"{1000 * r['per_page_s']['min']:.2f}", f"{1000 * r['per_page_s']['median']:.2f}", ""))
    rl = results.get("reload")
    if rl:
        for kind in ("docs page", "catalog", "snippet"):
            rows.append((f"reload after editing a {kind} (s)", f"{rl[kind]['min']:.2f}", f"{rl[kind]['median']:.2f}", f"aim < {rl['aim_s']}"))
    pv = results.get("preview")
    if pv:
        full = {row["factor"]: row["catalog_s"]["median"] for row in pv["rows"] if row["built"] > 2}
        for row in pv["rows"]:
            who = f"en + {pv['language']}" if row["built"] == 2 else f"all {row['built']} languages"
            aim = pv.get("aim_s", {}).get(str(row["factor"])) if row["built"] == 2 else None
            note = "" if row["built"] > 2 else f"x{row['catalog_s']['median'] / full[row['factor']]:.2f} of all languages"
            note += f", aim < {aim}" if aim else ""
            rows.append((f"preview x{row['factor']} ({row['pages']} pages), {who}: reload after a catalog edit (s)",
                         f"{row['catalog_s']['min']:.2f}", f"{row['catalog_s']['median']:.2f}", note))
    sc = results.get("scale")
    if sc:
        for row in sc["rows"]:
            rows.append((f"scale x{row['factor']}: {row['pages']} pages, ms/page", f"{row['per_page_ms']:.1f}", "",
                         f"{row['build_s']:.1f} s, peak {row['peak_rss_mib']:.0f} MiB"))
        rows.append(("scale: slope (s per page)", f"{sc['slope_s_per_page']:.4f}", "",
                     f"per-page x{sc['per_page_ratio_largest_vs_smallest']:.2f}, memory/pages x{sc['memory_ratio_vs_page_ratio']:.2f}"))
    ch = results.get("check")
    if ch:
        rows.append((f"safety check per message, cold ({ch['messages']} messages) (ms)",
                     f"{1000 * ch['cold_per_message_s']['min']:.2f}", f"{1000 * ch['cold_per_message_s']['median']:.2f}", ""))
        rows.append(("safety check per message, warm (µs)", f"{1e6 * ch['warm_per_message_s']['min']:.1f}",
                     f"{1e6 * ch['warm_per_message_s']['median']:.1f}", ""))
    fz = results.get("fuzz")
    if fz:
        rows.append((f"fuzz: {fz['tried']} translations in {fz['examples']} examples", f"{fz['accepted']} accepted",
                     f"{fz['rejected']} rejected", f"{fz['accepted_but_structure_changed']} changed the page (aim 0), "
                                                   f"{fz['seconds']:.0f} s"))
    fz = results.get("fuzz-segment")
    if fz:
        rows.append((f"fuzz-segment: pages run (seed {fz['seed']})", str(fz["examples"]), "",
                     f"{fz['seconds']:.0f} s, " + ("no counterexample" if fz["counterexample"] is None
                                                   else "COUNTEREXAMPLE: " + fz["counterexample"].splitlines()[0])))
    sn = results.get("snippets")
    if sn:
        rows.append((f"snippet serial floor, {sn['jobs']} torchrun jobs (s)", f"{sn['serial_floor_s']:.1f}", "", ""))
        for lanes, stat in sn["cold_s"].items():
            rows.append((f"snippet suite cold, {lanes} (s)", f"{stat['min']:.1f}", f"{stat['median']:.1f}", ""))
        rows.append(("snippet suite cold best / floor", f"{sn['best_cold_vs_floor']:.2f}", "", f"aim <= {sn['aim_vs_floor']}"))
        rows.append(("snippet suite warm (s)", f"{sn['warm_s']['min']:.2f}", f"{sn['warm_s']['median']:.2f}", f"aim < {sn['aim_warm_s']}"))
    fl = results.get("flakes")
    if fl:
        for module, row in fl["programs"].items():
            name = module.removeprefix("tests.snippets.").replace(".test_", "/")
            if row["runs"]:
                rows.append((f"bare runs failed: {name}", f"{row['failed']}/{row['runs']}", "",
                             f"flake rate {100 * row['flake_rate']:.0f} %"))
            else:
                rows.append((f"bare runs failed: {name}", "-", "", f"skipped {row['skipped']} (needs hardware)"))
    return rows


HISTORY = 10  # earlier runs kept in bench.json


def _history(json_path: Path) -> list[dict]:
    """The earlier runs in ``json_path``, newest first: the run it holds, then its history
    (at most :data:`HISTORY`); none when the file is missing or not a bench result."""
    try:
        last = json.loads(json_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    if not isinstance(last, dict) or "versions" not in last:
        return []
    earlier = last.pop("history", [])
    return [last, *earlier][:HISTORY]


def _commit(root: Path) -> str | None:
    """The checkout's commit (``git rev-parse --short HEAD``), or None outside git."""
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10)
    except OSError:
        return None
    return out.stdout.strip() or None


def run_bench(root: Path, parts: tuple[str, ...], repeat: int, json_path: Path, factors: tuple[int, ...] = (1, 10, 50),
              fuzz_translations: int = 100_000) -> dict:
    """Run the chosen parts (build, render, check, reload, preview, scale, snippets, flakes,
    fuzz, fuzz-segment); print and save the table.

    Args:
        root: the project root.
        parts: which measurements to run.
        repeat: runs per figure for the quick figures (slow ones run once per setting).
        json_path: where the JSON result goes.
        factors: page multipliers for the scale part; the preview part measures the
            smallest and the largest.
        fuzz_translations: mutated translations the fuzz part tries at least.

    Returns:
        The results mapping that was written as JSON.
    """
    results: dict = {"versions": _versions()}
    with tempfile.TemporaryDirectory(prefix="course-bench-") as tmp:
        project = _copy_project(root, Path(tmp))
        if "build" in parts:
            results["build"] = bench_build(project, repeat)
        if "render" in parts:
            results["render"] = bench_render(project, repeat)
        if "check" in parts:
            results["check"] = bench_check(project, repeat)
        if "reload" in parts:
            results["reload"] = bench_reload(project, repeat)
    if "preview" in parts:
        results["preview"] = bench_preview(root, repeat, tuple(sorted({min(factors), max(factors)})))
    if "scale" in parts:
        results["scale"] = bench_scale(root, factors)
    if "snippets" in parts:
        results["snippets"] = bench_snippets(root, repeat)
    if "fuzz" in parts:
        results["fuzz"] = bench_fuzz(root, fuzz_translations)
    if "flakes" in parts:
        results["flakes"] = bench_flakes(root)
    if "fuzz-segment" in parts:
        results["fuzz-segment"] = bench_fuzz_segment()
    results["when"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    results["commit"] = _commit(root)
    results["history"] = _history(json_path)
    json_path.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(_table(results, results["history"]))
    print(f"\nwritten: {json_path}")
    return results
