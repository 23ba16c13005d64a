"""The po-i18n command: what translators and maintainers run on the catalogs.

Every sub-command is a thin wrapper over the library the MkDocs plugin uses. Runs as the
``po-i18n`` console script and as ``python -m po_i18n``.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from mkdocs.exceptions import ConfigurationError

from . import catalog as po
from . import verdicts
from .catalog import CatalogError
from .check import check_project, config_problems, pending_warnings, page_warnings, project_check, refused_messages
from .extract import update
from .project import Project, ProjectError
from .stats import CatalogStats, catalog_stats


def _cmd_update(args: argparse.Namespace) -> int:
    project = Project.load(args.config)
    report = update(project, _languages(project, args), keep_typo_fixes=args.keep_translations, write=not args.dry_run)
    for path, line, change in report.changes:
        print(_change_line(project, path, line, change))
    would = "would update" if args.dry_run else "updated"
    for path in report.written:
        print(f"{would} {path.relative_to(project.root)}")
    for path in report.orphans:
        print(f"{path.relative_to(project.root)}: belongs to no English page; its translations were offered to "
              "the other catalogs of its language (see po-i18n check)")
    if args.keep_translations:
        kept = sum(change.kept for _, _, change in report.changes)
        print(f"{kept} translation(s) kept current, {len(report.changes) - kept} left fuzzy for their translators")
    if args.dry_run:
        print(f"{len(report.written)} catalog(s) would be updated, {len(report.unchanged)} unchanged (dry run: nothing written)")
    else:
        print(f"{len(report.written)} catalog(s) updated, {len(report.unchanged)} unchanged")
    return 0


def _change_line(project: Project, path: Path, line: int, change) -> str:
    """``i18n/ru/index.po:12: kept: "…old…" -> "…new…"``, or ``left fuzzy``, with the
    reason, for one message whose English changed (:class:`po_i18n.keep.Change`)."""
    from .typo import shown_change

    old, new = shown_change(change.old, change.new)
    where = f"{path.relative_to(project.root)}:{line}"
    if change.kept:
        return f'{where}: kept: "{old}" -> "{new}"'
    return f'{where}: left fuzzy: "{old}" -> "{new}": {change.reason}'


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
    verdicts.for_project(project)
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
    verdicts.for_project(project)
    try:
        found = check_project(project, _languages(project, args), msgfmt=args.msgfmt)
    except FileNotFoundError as exc:
        print(exc, file=sys.stderr)
        return 2
    found = config_problems(project) + page_warnings(project) + found
    for line in found:
        print(line)
    if found:
        return 1
    print("all catalogs are valid")
    # valid, but not finished: the lines the build prints for it (new English included,
    # which no catalog holds before po-i18n update), and what the strict build does with it
    shown_in_english = [line for language in _languages(project, args) or project.languages
                        for line in pending_warnings(project, language)]
    for line in shown_in_english:
        print(line)
    pending = [f"{path.relative_to(project.root)} ({st.fuzzy} fuzzy, {st.untranslated} untranslated)"
               for _, path, st in _stats(project, args) if st is not None and (st.fuzzy or st.untranslated)]
    fail = project.options.get("untranslated", "fail") == "fail"
    if pending:
        strict = "refused by mkdocs build --strict" if fail else "published in English by mkdocs build --strict (untranslated: warn)"
        print(f"not yet translated, shown in English and {strict}: {'; '.join(pending)}")
    return 1 if fail and shown_in_english else 0


def _cmd_serve(args: argparse.Namespace) -> int:
    import os

    project = Project.load(args.config)
    languages = _languages(project, args)
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    if languages:  # read by the plugin (po_i18n.plugin.PREVIEW_VARIABLE)
        env["PO_I18N_PREVIEW_LANGUAGES"] = ",".join(languages)
    # --dirty: a rebuild renders only the pages whose Markdown, catalogs or included files
    # changed (the plugin decides which: po_i18n.dirty)
    command = [sys.executable, "-m", "mkdocs", "serve", "--dirty", "--config-file", str(args.config), "--dev-addr", args.dev_addr,
               *(["--verbose"] if args.verbose else [])]
    os.execve(sys.executable, command, env)  # mkdocs serve takes over: Ctrl-C and exit status are its own
    return 0  # not reached


def command_parser(prog: str, description: str) -> tuple[argparse.ArgumentParser, argparse._SubParsersAction]:
    """A command's parser with the ``--config PATH`` option every command of a site takes,
    and its sub-parsers (one per sub-command, each setting ``func``; :func:`run` calls it)."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--config", type=Path, default=Path("mkdocs.yml"), help="path to mkdocs.yml (default: %(default)s)")
    return parser, parser.add_subparsers(dest="command", required=True, metavar="COMMAND")


def build_parser(prog: str = "po-i18n") -> argparse.ArgumentParser:
    """The argument parser of the ``po-i18n`` command (argparse, one sub-parser per command)."""
    parser, sub = command_parser(prog, __doc__.splitlines()[0])
    p = sub.add_parser("update", help="extract messages from the English pages and merge them into every catalog",
                       description="Extract the messages of docs/ and mkdocs.yml and merge them into i18n/<lang>/*.po: "
                                   "new messages empty, changed ones fuzzy with the previous English, removed ones obsolete; "
                                   "comments, flags and header fields are kept, and the translations of a catalog whose "
                                   "page is gone are offered to the others. A catalog with a duplicate message is refused "
                                   "(exit status 2) and then nothing is written.")
    p.add_argument("--lang", action="append", metavar="LOCALE", help="only this language (repeatable)")
    p.add_argument("--keep-translations", action="store_true",
                   help="the English changes of this run are typo fixes: keep their translations current, not fuzzy, "
                        "where the change is only a typo fix by the documented rule (po_i18n.typo) and the translation "
                        "still passes the safety check; print one line per changed message, kept or left fuzzy")
    p.add_argument("--dry-run", action="store_true", help="write nothing; print what would be updated")
    p.set_defaults(func=_cmd_update)

    p = sub.add_parser("stats", help="show how much of each catalog is translated",
                       description="A table per language and catalog: translated, fuzzy and untranslated messages, "
                                   "and the share of English words translated. Exit status 1 if any is below --min.")
    p.add_argument("--lang", action="append", metavar="LOCALE", help="only this language (repeatable)")
    p.add_argument("--min", type=float, default=0.0, metavar="PERCENT", help="fail when a catalog is below this percentage")
    p.set_defaults(func=_cmd_stats)

    p = sub.add_parser("check", help="validate every catalog: syntax, headers, msgids, safety of translations",
                       description="Validate catalogs and print one 'file:line: problem' line per problem, then the "
                                   "messages shown in English (untranslated, fuzzy, or new in English since the last "
                                   "update); exit status 1 if there is a problem, or messages shown in English under "
                                   "the plugin's 'untranslated: fail' (the default): exactly when mkdocs build --strict "
                                   "fails on the catalogs.")
    p.add_argument("--lang", action="append", metavar="LOCALE", help="only this language (repeatable)")
    p.add_argument("--msgfmt", action="store_true", help="also run GNU 'msgfmt --check' on each catalog")
    p.set_defaults(func=_cmd_check)

    p = sub.add_parser("serve", help="preview the site while you write or translate (mkdocs serve)",
                       description="Run mkdocs serve --dirty: after each save of a page, catalog or included "
                                   "file, render again only the pages it changes (a catalog edit: its own page in its "
                                   "own language) and reload the browser; navigation and search are refreshed when "
                                   "the server restarts. With --lang, only English and that language are built; the "
                                   "language selector then offers only those.")
    p.add_argument("--lang", action="append", metavar="LOCALE", help="build only English and this language (repeatable)")
    p.add_argument("-a", "--dev-addr", default="127.0.0.1:8000", metavar="IP:PORT",
                   help="where to serve (default: %(default)s)")
    p.add_argument("-v", "--verbose", action="store_true", help="MkDocs's debug output (names each page it renders)")
    p.set_defaults(func=_cmd_serve)

    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the ``po-i18n`` command line; returns the exit status (0 ok, 1 problems found, 2 bad input)."""
    return run(build_parser(), argv)


def run(parser: argparse.ArgumentParser, argv: list[str] | None = None) -> int:
    """Parse ``argv`` with ``parser`` and call the chosen sub-command's ``func(args) -> int``;
    bad input (a catalog, mkdocs.yml) is one line on stderr and exit status 2, never a
    traceback. For a site's own command built the same way (the course's ``course``)."""
    args = parser.parse_args(argv)
    try:
        try:
            return args.func(args)
        finally:
            verdicts.save()  # what check and stats judged, for the next build or command
            verdicts.use(None)  # a command's store ends with it (main() may run in a longer process)
    except (CatalogError, ProjectError) as exc:
        print(exc, file=sys.stderr)
        return 2
    except ConfigurationError as exc:  # mkdocs.yml as MkDocs reads it (the safety check needs its Markdown engine)
        print(str(exc).replace("\n", " "), file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader closed the pipe (po-i18n check | head): stop quietly, as Unix tools do
        # Python's own recipe (https://docs.python.org/3/library/signal.html#note-on-sigpipe):
        # point stdout at /dev/null so the interpreter's final flush raises nothing.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
