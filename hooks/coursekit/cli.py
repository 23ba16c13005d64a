"""The course command: what translators and maintainers run on the catalogs.

Every sub-command is a thin wrapper over the library the MkDocs hooks use.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from mkdocs.exceptions import ConfigurationError

from . import catalog as po
from .catalog import CatalogError
from .check import check_project, page_warnings, project_check, refused_messages
from .extract import update
from .project import Project, ProjectError
from .stats import CatalogStats, catalog_stats


def _cmd_update(args: argparse.Namespace) -> int:
    project = Project.load(args.config)
    report = update(project, _languages(project, args))
    for path in report.written:
        print(f"updated {path.relative_to(project.root)}")
    for path in report.orphans:
        print(f"{path.relative_to(project.root)}: belongs to no English page; its translations were offered to "
              "the other catalogs of its language (see course check)")
    print(f"{len(report.written)} catalog(s) updated, {len(report.unchanged)} unchanged")
    return 0


def _languages(project: Project, args: argparse.Namespace) -> tuple[str, ...] | None:
    languages = tuple(args.lang) if args.lang else None
    unknown = set(languages or ()) - set(project.languages)
    if unknown:
        raise ProjectError(f"{args.config}: unknown language(s) {', '.join(sorted(unknown))}; "
                           f"the i18n plugin lists {', '.join(project.languages)}")
    return languages


def _stats(project: Project, args: argparse.Namespace) -> list[tuple[str, Path, CatalogStats | None]]:
    """``(language, catalog file, its stats)`` for every catalog of the chosen languages,
    translations the safety check refuses counted as untranslated; a page's missing
    catalog comes with ``None``."""
    checker = project_check(project)
    rows: list[tuple[str, Path, CatalogStats | None]] = []
    for language in _languages(project, args) or project.languages:
        for path in project.catalog_files(language):
            rows.append((language, path, catalog_stats(po.load_cached(path), refused_messages(project, path, checker))))
        rows += [(language, project.catalog_path(language, page), None) for page in project.pages()
                 if not project.catalog_path(language, page).is_file()]
    return rows


def _cmd_stats(args: argparse.Namespace) -> int:
    project = Project.load(args.config)
    rows = _stats(project, args)
    print(f"{'lang':<5} {'catalog':<24} {'translated':>10} {'fuzzy':>6} {'untransl.':>9} {'words %':>8}")
    for language, path, st in rows:
        name = path.relative_to(project.i18n_dir / language).with_suffix("").as_posix()
        if st is None:
            print(f"{language:<5} {name:<24} {'no catalog':>35}")
        else:
            print(f"{language:<5} {name:<24} {st.translated:>10} {st.fuzzy:>6} {st.untranslated:>9} {st.percent:>7.1f}%")
    shares = [(path, 0.0 if st is None else st.percent) for _, path, st in rows]
    below = [(path, percent) for path, percent in shares if percent < args.min]
    for path, percent in below:
        print(f"{path.relative_to(project.root)}: {percent:.1f}% translated, below --min {args.min:g}%", file=sys.stderr)
    return 1 if below else 0


def _cmd_check(args: argparse.Namespace) -> int:
    project = Project.load(args.config)
    try:
        found = check_project(project, _languages(project, args), msgfmt=args.msgfmt)
    except FileNotFoundError as exc:
        print(exc, file=sys.stderr)
        return 2
    found = page_warnings(project) + found
    for line in found:
        print(line)
    if not found:
        print("all catalogs are valid")
        pending = [f"{path.relative_to(project.root)} ({st.fuzzy} fuzzy, {st.untranslated} untranslated)"
                   for _, path, st in _stats(project, args) if st is not None and (st.fuzzy or st.untranslated)]
        if pending:  # valid, but not finished: say so, since mkdocs build --strict fails on it
            print(f"not yet translated, shown in English and refused by mkdocs build --strict: {'; '.join(pending)}")
    return 1 if found else 0


def _cmd_serve(args: argparse.Namespace) -> int:
    import os

    project = Project.load(args.config)
    languages = _languages(project, args)
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    if languages:  # read by hooks/preview_languages.py
        env["COURSE_PREVIEW_LANGUAGES"] = ",".join(languages)
    command = [sys.executable, "-m", "mkdocs", "serve", "--config-file", str(args.config), "--dev-addr", args.dev_addr]
    os.execve(sys.executable, command, env)  # mkdocs serve takes over: Ctrl-C and exit status are its own
    return 0  # not reached


def _cmd_bench(args: argparse.Namespace) -> int:
    from .bench import run_bench  # needs the test extra (torch, pytest); imported on demand

    project = Project.load(args.config)
    parts = tuple(args.only) if args.only else ("build", "render", "check", "reload", "preview", "scale", "snippets", "flakes")
    run_bench(project.root, parts, args.repeat, args.json, tuple(args.factors), args.fuzz_translations)
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``course`` command (argparse, one sub-parser per command)."""
    parser = argparse.ArgumentParser(prog="course", description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=Path("mkdocs.yml"), help="path to mkdocs.yml (default: %(default)s)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    p = sub.add_parser("update", help="extract messages from the English pages and merge them into every catalog",
                       description="Extract the messages of docs/ and mkdocs.yml and merge them into i18n/<lang>/*.po: "
                                   "new messages empty, changed ones fuzzy with the previous English, removed ones obsolete; "
                                   "comments, flags and header fields are kept, and the translations of a catalog whose "
                                   "page is gone are offered to the others. A catalog with a duplicate message is refused "
                                   "(exit status 2) and then nothing is written.")
    p.add_argument("--lang", action="append", metavar="LOCALE", help="only this language (repeatable)")
    p.set_defaults(func=_cmd_update)

    p = sub.add_parser("stats", help="show how much of each catalog is translated",
                       description="A table per language and catalog: translated, fuzzy and untranslated messages, "
                                   "and the share of English words translated. Exit status 1 if any is below --min.")
    p.add_argument("--lang", action="append", metavar="LOCALE", help="only this language (repeatable)")
    p.add_argument("--min", type=float, default=0.0, metavar="PERCENT", help="fail when a catalog is below this percentage")
    p.set_defaults(func=_cmd_stats)

    p = sub.add_parser("check", help="validate every catalog: syntax, headers, msgids, safety of translations",
                       description="Validate catalogs and print one 'file:line: problem' line per problem; "
                                   "exit status 1 if there is any.")
    p.add_argument("--lang", action="append", metavar="LOCALE", help="only this language (repeatable)")
    p.add_argument("--msgfmt", action="store_true", help="also run GNU 'msgfmt --check' on each catalog")
    p.set_defaults(func=_cmd_check)

    p = sub.add_parser("serve", help="preview the site while you write or translate (mkdocs serve)",
                       description="Run mkdocs serve: rebuild and reload the browser after each save of a page, "
                                   "catalog or snippet. With --lang, only English and that language are built, "
                                   "so a rebuild takes about two fifths of the time; the language selector then "
                                   "offers only those.")
    p.add_argument("--lang", action="append", metavar="LOCALE", help="build only English and this language (repeatable)")
    p.add_argument("-a", "--dev-addr", default="127.0.0.1:8000", metavar="IP:PORT",
                   help="where to serve (default: %(default)s)")
    p.set_defaults(func=_cmd_serve)

    p = sub.add_parser("bench", help="measure build, reload, scale and snippet-suite costs against their floors",
                       description="Print one table (and write it as JSON) of what building and verifying the course "
                                   "costs: build with vs without hooks, render per page, reload after an edit under "
                                   "mkdocs serve, the same for a catalog edit under the one-language preview "
                                   "(course serve --lang) at 1x and 50x the pages, time per page at 10x and 50x the "
                                   "pages, the snippet suite cold, warm and in -n lanes against a serial floor of bare torchrun jobs, the safety "
                                   "check per message, and each program's flake rate over ten bare runs of its page's "
                                   "launch line; with --only fuzz, the safety check's fuzz property over "
                                   "--fuzz-translations mutated translations, and with --only fuzz-segment, the "
                                   "segmenter's differential fuzzer on 20,000 random pages (neither is part of the "
                                   "default run: about half an hour each).")
    p.add_argument("--only", action="append", choices=("build", "render", "check", "reload", "preview", "scale", "snippets", "flakes", "fuzz",
                                                         "fuzz-segment"),
                   help="run only this part (repeatable)")
    p.add_argument("--fuzz-translations", type=int, default=100_000, metavar="N",
                   help="mutated translations the fuzz part tries at least (default: %(default)s)")
    p.add_argument("--repeat", type=int, default=3, metavar="N", help="runs per quick figure (default: %(default)s)")
    p.add_argument("--factors", type=int, nargs="+", default=[1, 10, 50], metavar="K", help="page multipliers for the scale part")
    p.add_argument("--json", type=Path, default=Path("bench.json"), metavar="PATH", help="where to write the results (default: %(default)s)")
    p.set_defaults(func=_cmd_bench)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the ``course`` command line; returns the exit status (0 ok, 1 problems found, 2 bad input)."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (CatalogError, ProjectError) as exc:
        print(exc, file=sys.stderr)
        return 2
    except ConfigurationError as exc:  # mkdocs.yml as MkDocs reads it (the safety check needs its Markdown engine)
        print(str(exc).replace("\n", " "), file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader closed the pipe (course check | head): stop quietly, as Unix tools do
        # Python's own recipe (https://docs.python.org/3/library/signal.html#note-on-sigpipe):
        # point stdout at /dev/null so the interpreter's final flush raises nothing.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
