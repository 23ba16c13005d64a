"""The course command: what only the course needs on top of the engine's ``po-i18n``
command (``po-i18n update``/``check``/``stats``/``serve`` work on the course's catalogs
as on any site's).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from po_i18n.cli import command_parser, run
from po_i18n.project import Project


def _cmd_bench(args: argparse.Namespace) -> int:
    from .bench import run_bench  # needs the test extra (torch, pytest); imported on demand

    project = Project.load(args.config)
    parts = tuple(args.only) if args.only else ("build", "render", "check", "reload", "preview", "scale", "snippets", "flakes")
    run_bench(project.root, parts, args.repeat, args.json, tuple(args.factors), args.fuzz_translations)
    return 0


def _cmd_new_program(args: argparse.Namespace) -> int:
    from .scaffold import ScaffoldError, new_program

    root = Project.load(args.config).root
    try:
        made = new_program(root, args.lesson, args.name)
    except ScaffoldError as exc:
        print(exc, file=sys.stderr)
        return 2
    for path in made.written:
        print(f"wrote {path.relative_to(root)}")
    print(f"\nShow it on docs/{made.page.name} with these blocks (each a fence whose only line includes a section):\n")
    print("\n\n".join(made.includes))
    print(f"\nThen make it teach something, test each claim the page makes, and verify it (this writes its record):\n"
          f"  .venv/bin/python -m pytest {made.test.relative_to(root)}")
    return 0


def _cmd_add_language(args: argparse.Namespace) -> int:
    from .languages import LanguageError, add_language

    root = Project.load(args.config).root
    try:
        made = add_language(args.config, args.locale, args.name, published=not args.unpublished)
    except LanguageError as exc:
        print(exc, file=sys.stderr)
        return 2
    state = "build: true" if made.published else "build: false, carried but not built"
    print(f"mkdocs.yml: added {made.locale} ({made.name}; {state})")
    print(f"i18n/{made.locale}/: {len(made.catalogs)} catalogs (one per page, plus the interface catalogs)")
    if made.glossary is not None:
        print(f"wrote {made.glossary.relative_to(root)}")
    else:
        print(f"kept i18n/{made.locale}/glossary.md as it was")
    print(f"\nNext: translate them (i18n/README.md), preview with  .venv/bin/po-i18n serve --lang {made.locale}"
          f"\nand see what is left with  .venv/bin/po-i18n stats --lang {made.locale}"
          + ("" if made.published else f"\nWhen it is complete, set build: true for {made.locale} in mkdocs.yml."))
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``course`` command (argparse, one sub-parser per command)."""
    parser, sub = command_parser("course", __doc__.splitlines()[0])
    p = sub.add_parser("bench", help="measure build, reload, scale and snippet-suite costs against their floors",
                       description="Print one table (and write it as JSON) of what building and verifying the course "
                                   "costs: build with vs without hooks, render per page, reload after an edit under "
                                   "mkdocs serve, the same for a catalog edit under the one-language preview "
                                   "(po-i18n serve --lang) at 1x and 50x the pages, time per page at 10x and 50x the "
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

    p = sub.add_parser("new-program", help="start a lesson's new program and its test module",
                       description="Write snippets/<lesson_module>/<name>.py, a bare program that runs as a torchrun job "
                                   "(its launch section and time limit in its docstring, the course's device rule, one "
                                   "all-reduce), and tests/snippets/test_<lesson_module>/test_<name>.py (its harness run, "
                                   "a test of what it prints, its bare runs, and the verifies marker that gets it a "
                                   "record); print the include lines to paste into the page. Never overwrites a file "
                                   "(exit status 2).")
    p.add_argument("lesson", help="the lesson's slug, as its page is named (ddp-basics) or its programs' folder (ddp_basics)")
    p.add_argument("name", help="the program's name, a lower-case Python module name (rank_sum)")
    p.set_defaults(func=_cmd_new_program)

    p = sub.add_parser("add-language", help="add a translation language: mkdocs.yml, its catalogs, a glossary skeleton",
                       description="Add the language to the i18n plugin's languages in mkdocs.yml (comments and tags "
                                   "kept), create its catalogs with po-i18n update --lang LOCALE (one per page, plus the "
                                   "interface catalogs), and write i18n/LOCALE/glossary.md listing the other glossaries' "
                                   "terms in English with empty translations. Refuses a locale mkdocs.yml lists already "
                                   "or Babel does not know (exit status 2).")
    p.add_argument("locale", help="the locale, as Babel knows it (de, pt_BR)")
    p.add_argument("name", help="the language's name in that language, as the language selector shows it (Deutsch)")
    p.add_argument("--unpublished", action="store_true",
                   help="write build: false: carry the language in the repository, unbuilt, until it is complete")
    p.set_defaults(func=_cmd_add_language)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the ``course`` command line; returns the exit status (0 ok, 2 bad input)."""
    return run(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
