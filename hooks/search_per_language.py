"""MkDocs hook: one search index per language, searched with that language's own pipeline.

mkdocs-static-i18n 1.3 merges every language's pages into one ``search/search_index.json``
whose lunr pipeline mixes all five languages, so a Japanese reader gets English results
and no Japanese segmentation (``shared/BROWSER-FACTS.md``). After the last language is
built, this hook splits that index into ``<lang>/search/search_index.json`` files, each
with the ``lang``, ``pipeline`` and ``separator`` Material defines for the language in
``partials/languages/<lang>.html`` (Japanese: TinySegmenter). Each page's Material
``__config`` then points ``base`` at its language root, where Material's search looks
for ``search/search_index.json``; the 404 pages of each language too.

Every page's search runs in ``assets/javascripts/workers/course-search.js`` (in docs/), a
wrapper around Material's worker that cuts Japanese queries as the Japanese text is cut
and lower-cases Turkish the Turkish way; the file says why and how.
"""
from __future__ import annotations

import json
import logging
import re
from pathlib import Path

from mkdocs.plugins import event_priority

from po_i18n.build_context import i18n_plugin, language_of

log = logging.getLogger("mkdocs.hooks.search_per_language")
_CONFIG_SCRIPT = re.compile(r'(<script id="__config" type="application/json">)(.*?)(</script>)', re.S)
_KEYS = ("search.config.lang", "search.config.pipeline", "search.config.separator")
_WORKER = "course-search.js"  # docs/assets/javascripts/workers/, beside Material's worker


def _language_search_config(env, language: str) -> dict:
    """Material's search settings for a language, from its language partial (en fills gaps)."""
    own = env.get_template(f"partials/languages/{language}.html").module.t
    fallback = env.get_template("partials/languages/en.html").module.t
    lang, pipeline, separator = (str(own(k)) or str(fallback(k)) for k in _KEYS)
    return {"lang": [lang], "pipeline": [p for p in pipeline.split(",") if p], "separator": separator}


def _rewrite_config(output: str, language: str, default: str) -> str:
    """Material's ``__config``: ``base`` at the language root of a translated page, and
    the search worker replaced by the course's wrapper around it."""

    def rewrite(match: re.Match) -> str:
        data = json.loads(match.group(2))
        if language != default:
            base = data["base"].rstrip("/")
            data["base"] = f"{base}/{language}/" if base not in ("", ".") else f"{language}/"  # trailing slash: a folder
        folder, _, material = data["search"].rpartition("/")
        if not material.startswith(_WORKER):
            data["search"] = f"{folder}/{_WORKER}?worker={material}" if folder else f"{_WORKER}?worker={material}"
        return match.group(1) + json.dumps(data, ensure_ascii=False, separators=(",", ":")) + match.group(3)

    return _CONFIG_SCRIPT.sub(rewrite, output, count=1)


@event_priority(-200)
def on_post_page(output, page, config):
    """Point a page's search at its language's index and at the course's search worker."""
    return _rewrite_config(output, *language_of(config))


@event_priority(-200)
def on_post_template(output_content, template_name, config):
    """The same for the theme's static pages (the 404 page of each language)."""
    if not template_name.endswith(".html"):
        return output_content
    return _rewrite_config(output_content, *language_of(config))


@event_priority(-200)  # after mkdocs-static-i18n has written the merged index
def on_post_build(config):
    """Split the merged index into one index per language (only once, after the last build)."""
    plugin = i18n_plugin(config)
    if plugin is None or plugin.building:
        return
    site = Path(config.site_dir)
    merged_path = site / "search" / "search_index.json"
    if not merged_path.is_file():
        return
    merged = json.loads(merged_path.read_text(encoding="utf-8"))
    languages = [lang for lang in plugin.build_languages]
    others = [lang for lang in languages if lang != plugin.default_language]
    buckets: dict[str, list] = {lang: [] for lang in languages}
    for doc in merged["docs"]:
        prefix, _, rest = doc["location"].partition("/")
        if prefix in others:  # locations become relative to the language root
            buckets[prefix].append({**doc, "location": rest})
        else:
            buckets[plugin.default_language].append(doc)
    env = config.theme.get_env()
    for language, docs in buckets.items():
        index = {"config": {**merged["config"], **_language_search_config(env, language)}, "docs": docs}
        target = site / "search" if language == plugin.default_language else site / language / "search"
        target.mkdir(parents=True, exist_ok=True)
        text = json.dumps(index, ensure_ascii=False, separators=(",", ":"))
        (target / "search_index.json").write_text(text, encoding="utf-8")
        log.info(f"search index for '{language}': {len(docs)} entries in {target.relative_to(site)}")
