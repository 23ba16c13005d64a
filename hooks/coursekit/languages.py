"""``course add-language``: a new translation language in one step.

:func:`add_language` adds the language to the ``i18n`` plugin's ``languages`` in
mkdocs.yml (a text edit of that list alone, so comments and the ``!ENV``/``!relative``
tags stay; the result is read back with MkDocs's YAML loader before it is written),
creates its catalogs with the engine's own ``po-i18n update`` (:func:`po_i18n.extract.update`),
and writes ``i18n/<locale>/glossary.md``, a skeleton listing the terms of the other
languages' glossaries in English with empty translations. :func:`published_languages` is
the one place the tests and tools read which languages a build publishes.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

import yaml
from babel.core import Locale, UnknownLocaleError
from po_i18n.extract import update
from po_i18n.project import Project, ProjectError

__all__ = ["LanguageError", "NewLanguage", "add_language", "published_languages", "glossary_terms"]

GLOSSARY = "glossary.md"
_LANGUAGES_KEY = re.compile(r"^(?P<indent> *)languages:\s*(#.*)?$")
_PLUGIN = re.compile(r"^ *- *i18n:\s*(#.*)?$")


class LanguageError(Exception):
    """The language cannot be added; the message names the thing, the problem and the remedy."""


@dataclass(frozen=True)
class NewLanguage:
    """What :func:`add_language` wrote.

    Attributes:
        locale: the language's locale (``de``).
        name: its name in the language selector (``Deutsch``).
        published: whether mkdocs.yml builds it (``build: true``).
        config: the mkdocs.yml that now lists it.
        catalogs: the catalogs ``po-i18n update`` wrote, one per page plus the interface catalogs.
        glossary: the glossary skeleton, or ``None`` when ``i18n/<locale>/glossary.md`` existed (kept as it was).
    """

    locale: str
    name: str
    published: bool
    config: Path
    catalogs: tuple[Path, ...]
    glossary: Path | None


def _i18n_languages(config: dict) -> list[dict]:
    """The ``languages`` entries of the i18n plugin in a parsed mkdocs.yml."""
    for plugin in config.get("plugins") or []:
        if isinstance(plugin, dict) and "i18n" in plugin:
            return list((plugin["i18n"] or {}).get("languages") or [])
    return []


def published_languages(project: Project) -> tuple[str, ...]:
    """The languages a build of ``project`` publishes, default first, in mkdocs.yml order:
    every i18n ``languages`` entry but those with ``build: false`` (carried, not yet built)."""
    built = {entry["locale"] for entry in _i18n_languages(project.config) if entry.get("build", True)}
    return tuple(lang for lang in (project.default_language, *project.languages) if lang in built)


def glossary_terms(project: Project) -> list[str]:
    """The English terms of the languages' glossaries (the first column of their tables)
    that at least two glossaries share (all of them while there is only one glossary): the
    field's terms every language has needed, not one translator's wording of a rarer one.
    Each once, in the order of the languages in mkdocs.yml and of the rows in each glossary."""
    seen: dict[str, int] = {}
    glossaries = 0
    for language in project.languages:
        path = project.i18n_dir / language / GLOSSARY
        if not path.is_file():
            continue
        glossaries += 1
        rows = [line for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("|")]
        cells = {re.split(r"(?<!\\)\|", row)[1].strip() for row in rows[2:]}  # after the header and | --- |
        for row in rows[2:]:
            cell = re.split(r"(?<!\\)\|", row)[1].strip()
            if cell in cells:
                seen[cell] = seen.get(cell, 0) + 1
                cells.discard(cell)  # a term twice in one glossary counts once
    return [term for term, count in seen.items() if term and count >= min(2, glossaries)]


def _english_name(locale: str) -> str:
    return Locale.parse(locale.replace("-", "_")).get_display_name("en")


def _glossary(project: Project, locale: str) -> str:
    english = _english_name(locale)
    rows = "".join(f"| {term} | | |\n" for term in glossary_terms(project))
    return (f"# {english} glossary ({locale})\n\n"
            f"How the {english} catalogs (`i18n/{locale}/*.po`) render the field's terms, so that every page and\n"
            f"every translator uses the same words. Code, identifiers, environment variables and API names\n"
            f"(`torchrun`, `WORLD_SIZE`, `DistributedSampler`) are never translated.\n\n"
            f"Fill in the second column (the terms at least two other glossaries share), say in\n"
            f"the third what to avoid and why, and add each new term the pages need.\n\n"
            f"| English term | {english} rendering | note |\n| --- | --- | --- |\n{rows}")


def _scalar(value: str) -> str:
    """``value`` as a YAML scalar: bare where YAML reads it back as that string, else double-quoted."""
    try:
        if yaml.safe_load(f"k: {value}") == {"k": value}:
            return value
    except yaml.YAMLError:
        pass
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a YAML double-quoted scalar


def _with_language(text: str, config: Path, locale: str, name: str, published: bool) -> str:
    """mkdocs.yml's ``text`` with one entry appended to the i18n plugin's ``languages`` list,
    written as the list's first entry is (its indentation, one key per line)."""
    lines = text.splitlines(keepends=True)
    plugin = next((i for i, line in enumerate(lines) if _PLUGIN.match(line)), None)
    key = next((i for i in range(plugin + 1, len(lines)) if _LANGUAGES_KEY.match(lines[i])), None) if plugin is not None else None
    first = next((i for i in range(key + 1, len(lines)) if lines[i].strip() and not lines[i].lstrip().startswith("#")),
                 None) if key is not None else None
    if first is None or not lines[first].lstrip().startswith("- ") or "{" in lines[first]:
        raise LanguageError(f"{config}: no block list under the i18n plugin's 'languages:' (one '- locale: xx' entry per "
                            f"language, keys on their own lines); write it so, or add {locale} by hand as "
                            f"i18n/README.md says")
    indent = len(lines[first]) - len(lines[first].lstrip())
    last = first
    for i in range(first + 1, len(lines)):
        stripped = lines[i].strip()
        if not stripped:
            continue
        depth = len(lines[i]) - len(lines[i].lstrip())
        if depth > indent or (depth == indent and stripped.startswith("- ")):
            last = i
        else:
            break
    pad = " " * indent
    entry = (f"{pad}- locale: {_scalar(locale)}\n{pad}  name: {_scalar(name)}\n"
             f"{pad}  build: {'true' if published else 'false'}"
             f"{'' if published else '   # carried, not published until its catalogs are complete'}\n")
    if not lines[last].endswith("\n"):
        lines[last] += "\n"
    return "".join(lines[:last + 1]) + entry + "".join(lines[last + 1:])


def add_language(config: Path, locale: str, name: str, published: bool = True) -> NewLanguage:
    """Add a translation language to the course (see the module docstring).

    Args:
        config: the project's mkdocs.yml.
        locale: the locale, as Babel knows it (``de``, ``pt_BR``); its catalogs go in ``i18n/<locale>/``.
        name: the language's name in its own language, as the language selector shows it (``Deutsch``).
        published: ``False`` writes ``build: false``: the language is carried in the repository
            (its catalogs kept up to date by ``po-i18n update``) but not built until it is complete.

    Returns:
        A :class:`NewLanguage` naming what was written.

    Raises:
        LanguageError: the locale is listed already or Babel does not know it, the name is
            empty, or mkdocs.yml's ``languages`` is not a block list this can extend; nothing
            is written then.
    """
    config = Path(config).resolve()
    project = Project.load(config)
    listed = (project.default_language, *project.languages)
    if locale in listed:
        raise LanguageError(f"language '{locale}': mkdocs.yml lists it already ({', '.join(listed)}); "
                            f"to refresh its catalogs run po-i18n update --lang {locale}")
    try:
        _english_name(locale)
    except (UnknownLocaleError, ValueError, TypeError):
        raise LanguageError(f"language '{locale}': Babel knows no such locale, so its catalogs could have no plural "
                            f"rules; use an ISO 639 code such as de, pt_BR or zh_Hant") from None
    if not name.strip() or "\n" in name:
        raise LanguageError(f"language '{locale}': its name '{name}' is empty or has a line break; give the name the "
                            f"language selector shows, in the language itself (Deutsch for de)")
    text = _with_language(config.read_text(encoding="utf-8"), config, locale, name, published)
    scratch = config.with_name(f".{config.name}.add-language")
    scratch.write_text(text, encoding="utf-8")
    try:  # read back as MkDocs reads it (Project.load uses MkDocs's YAML loader)
        added = [entry for entry in _i18n_languages(Project.load(scratch).config) if entry.get("locale") == locale]
    except (ProjectError, yaml.YAMLError) as exc:
        scratch.unlink()
        raise LanguageError(f"{config}: adding {locale} would make it unreadable ({exc}); "
                            f"add it by hand as i18n/README.md says") from None
    if added != [{"locale": locale, "name": name, "build": published}]:
        scratch.unlink()
        raise LanguageError(f"{config}: adding {locale} read back as {added}; add it by hand as i18n/README.md says")
    try:
        report = update(project, (locale,))  # the engine's po-i18n update --lang <locale>
        glossary = project.i18n_dir / locale / GLOSSARY
        if glossary.exists():
            glossary = None  # kept as it is
        else:
            glossary.write_text(_glossary(project, locale), encoding="utf-8")
        os.replace(scratch, config)
    finally:
        scratch.unlink(missing_ok=True)
    return NewLanguage(locale, name, published, config, tuple(report.written + report.unchanged), glossary)
