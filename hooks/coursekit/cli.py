"""The ``course`` command: what translators and maintainers run on the catalogs.

Every sub-command is a thin wrapper over the library the MkDocs hooks use.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .catalog import CatalogError
from .extract import update
from .project import Project, ProjectError


def _cmd_update(args: argparse.Namespace) -> int:
    project = Project.load(args.config)
    languages = tuple(args.lang) if args.lang else None
    unknown = set(languages or ()) - set(project.languages)
    if unknown:
        print(f"{args.config}: unknown language(s) {', '.join(sorted(unknown))}; "
              f"the i18n plugin lists {', '.join(project.languages)}", file=sys.stderr)
        return 2
    report = update(project, languages)
    for path in report.written:
        print(f"updated {path.relative_to(project.root)}")
    print(f"{len(report.written)} catalog(s) updated, {len(report.unchanged)} unchanged")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``course`` command (argparse, one sub-parser per command)."""
    parser = argparse.ArgumentParser(prog="course", description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=Path("mkdocs.yml"), help="path to mkdocs.yml (default: %(default)s)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    p = sub.add_parser("update", help="extract messages from the English pages and merge them into every catalog",
                       description="Extract the messages of docs/ and mkdocs.yml and merge them into i18n/<lang>/*.po: "
                                   "new messages empty, changed ones fuzzy with the previous English, removed ones obsolete.")
    p.add_argument("--lang", action="append", metavar="LOCALE", help="only this language (repeatable)")
    p.set_defaults(func=_cmd_update)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the ``course`` command line; returns the exit status (0 ok, 1 problems found, 2 bad input)."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (CatalogError, ProjectError) as exc:
        print(exc, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
