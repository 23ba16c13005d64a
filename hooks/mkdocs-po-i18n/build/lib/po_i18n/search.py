"""One search index per language, searched with that language's own pipeline (Material only).

mkdocs-static-i18n (1.2, 1.3) merges every language's pages into one
``search/search_index.json`` whose lunr pipeline mixes all languages, so a Japanese reader
gets English results and no Japanese segmentation. After the last language is built, the
plugin splits that index into ``<lang>/search/search_index.json`` files, each with the
``lang``, ``pipeline`` and ``separator`` Material defines for the language in
``partials/languages/<lang>.html`` (Japanese: TinySegmenter). Each page's Material
``__config`` then points ``base`` at its language root, where Material's search looks for
``search/search_index.json``; the theme's static pages (404) of each language too.

Every page's search runs in :data:`WORKER` (``assets/po-i18n-search.js`` of this package),
a wrapper around Material's worker that cuts Japanese queries as the Japanese text is cut
and lower-cases Turkish the Turkish way; the file says why and how. It lies beside
Material's worker (``assets/javascripts/workers/``), whose language support it loads from
``../lunr/``.

The functions that change text are pure; :func:`write_language_indexes` writes the files.
The plugin's ``search_per_language`` option (:mod:`po_i18n.plugin`) calls them.
"""
from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from importlib.resources import files as package_files
from pathlib import Path

__all__ = ["WORKER", "WORKER_URI", "applies", "language_search_config", "rewrite_config", "split_index",
           "worker_source", "write_language_indexes"]

log = logging.getLogger("mkdocs.plugins.po_i18n")

WORKER = "po-i18n-search.js"
WORKER_URI = f"assets/javascripts/workers/{WORKER}"  # beside Material's worker (base.html's __config "search")
_CONFIG_SCRIPT = re.compile(r'(<script id="__config" type="application/json">)(.*?)(</script>)', re.S)
_KEYS = ("search.config.lang", "search.config.pipeline", "search.config.separator")
_SEARCH_PLUGINS = ("search", "material/search")  # the names mkdocs-static-i18n looks for too


def applies(config) -> bool:
    """Whether the build has what per-language search works with: the Material theme (its
    ``__config`` and search worker) and an enabled search plugin.

    Args:
        config: the MkDocs config of the build.
    Returns:
        bool: ``True`` with ``theme: material`` and ``plugins: [search]`` (Material's, or
        MkDocs's under another theme name) not switched off by its ``enabled: false``
        (Material's search option).
    """
    if config.theme.name != "material":
        return False
    for name in _SEARCH_PLUGINS:
        plugin = config.plugins.get(name)
        if plugin is not None and plugin.config.get("enabled", True):
            return True
    return False


def worker_source() -> bytes:
    """The worker's bytes, package data of ``po_i18n`` (``assets/po-i18n-search.js``).

    Returns:
        bytes: the JavaScript file.
    Raises:
        OSError: the package was installed without its data (pyproject.toml's
            ``[tool.setuptools.package-data]`` names it).
    """
    return (package_files("po_i18n") / "assets" / WORKER).read_bytes()


def language_search_config(env, language: str) -> dict:
    """Material's search settings for a language, from its language partial.

    Args:
        env: the theme's Jinja2 environment (``config.theme.get_env()``).
        language: a locale code Material has a partial for (``partials/languages/ja.html``).
    Returns:
        dict: ``{"lang": [str], "pipeline": [str], "separator": str}``, each from the
        language's partial, English's where the partial leaves it empty.
    Raises:
        jinja2.TemplateNotFound: Material has no partial for the language.
    """
    own = env.get_template(f"partials/languages/{language}.html").module.t
    fallback = env.get_template("partials/languages/en.html").module.t
    lang, pipeline, separator = (str(own(k)) or str(fallback(k)) for k in _KEYS)
    return {"lang": [lang], "pipeline": [p for p in pipeline.split(",") if p], "separator": separator}


def rewrite_config(output: str, language: str, default: str) -> str:
    """A page with Material's ``__config`` pointed at its language's index and at the worker.

    ``base`` becomes the language root of a translated page (``../`` → ``../ja/``), where
    Material's search fetches ``search/search_index.json``; ``search`` (Material's worker)
    becomes :data:`WORKER` in the same folder with Material's worker named in
    ``?worker=``.

    Args:
        output: a page's HTML as Material renders it (``templates/base.html``).
        language: the language of the page.
        default: the site's default language (its pages are at the root).
    Returns:
        str: the HTML with the first ``__config`` rewritten; unchanged without one (another
        theme) or where it already names the worker.
    """

    def rewrite(match: re.Match) -> str:
        data = json.loads(match.group(2))
        if language != default:
            base = data["base"].rstrip("/")
            data["base"] = f"{base}/{language}/" if base not in ("", ".") else f"{language}/"  # trailing slash: a folder
        folder, _, material = data["search"].rpartition("/")
        if not material.startswith(WORKER):
            data["search"] = f"{folder}/{WORKER}?worker={material}" if folder else f"{WORKER}?worker={material}"
        return match.group(1) + json.dumps(data, ensure_ascii=False, separators=(",", ":")) + match.group(3)

    return _CONFIG_SCRIPT.sub(rewrite, output, count=1)


def split_index(merged: Mapping, languages: Sequence[str], default: str,
                settings: Mapping[str, Mapping]) -> dict[str, dict]:
    """mkdocs-static-i18n's merged search index cut into one index per language.

    A document whose location starts with another language's folder (``ja/ddp-basics/``)
    belongs to that language, its location made relative to the language root
    (``ddp-basics/``); every other document to the default language.

    Args:
        merged: the merged index, ``{"config": {...}, "docs": [{"location": str, ...}]}``
            as Material's search plugin writes it.
        languages: the languages built (mkdocs-static-i18n's ``build_languages``).
        default: the default language.
        settings: per language, the search settings that replace the merged ones
            (:func:`language_search_config`).
    Returns:
        dict[str, dict]: per language in ``languages``, its index (the merged ``config``
        updated with the language's settings, and its documents in their merged order).
    """
    others = [lang for lang in languages if lang != default]
    buckets: dict[str, list] = {lang: [] for lang in languages}
    for doc in merged["docs"]:
        prefix, _, rest = doc["location"].partition("/")
        if prefix in others:  # locations become relative to the language root
            buckets[prefix].append({**doc, "location": rest})
        else:
            buckets[default].append(doc)
    return {lang: {"config": {**merged["config"], **settings[lang]}, "docs": docs} for lang, docs in buckets.items()}


def write_language_indexes(site_dir: str | Path, languages: Sequence[str], default: str, env) -> None:
    """Replace the merged ``search/search_index.json`` of a built site by one index per
    language: the default language's at ``search/``, the others' at ``<lang>/search/``.

    Args:
        site_dir: the built site (``config.site_dir``).
        languages: the languages built (mkdocs-static-i18n's ``build_languages``).
        default: the default language.
        env: the theme's Jinja2 environment, for :func:`language_search_config`.
    Returns:
        None; nothing is written where the site has no merged index (search off).
    Raises:
        OSError: an index cannot be read or written.
    """
    site = Path(site_dir)
    merged_path = site / "search" / "search_index.json"
    if not merged_path.is_file():
        return
    merged = json.loads(merged_path.read_text(encoding="utf-8"))
    settings = {lang: language_search_config(env, lang) for lang in languages}
    for language, index in split_index(merged, languages, default, settings).items():
        target = site / "search" if language == default else site / language / "search"
        target.mkdir(parents=True, exist_ok=True)
        text = json.dumps(index, ensure_ascii=False, separators=(",", ":"))
        (target / "search_index.json").write_text(text, encoding="utf-8")
        log.info(f"search index for '{language}': {len(index['docs'])} entries in {target.relative_to(site).as_posix()}")
