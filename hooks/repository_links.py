"""MkDocs hook: the repository link and "edit this page" links, only when the build names
the repository (``REPO_URL``, :mod:`coursekit.repository`).

English pages edit their Markdown in ``docs/``; a translated page edits its catalog
(``i18n/<lang>/<page>.po``), where its text comes from. Generated pages (the translation
status page) have no source to edit: MkDocs gives them no edit link (``File.edit_uri``).
"""
from __future__ import annotations

import os
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority

from coursekit.repository import DEFAULT_BRANCH, branch_problem, edit_link, repo_url_problem
from po_i18n.build_context import language_of, project_of


def _branch() -> str:
    return os.environ.get("REPO_BRANCH") or DEFAULT_BRANCH


@event_priority(-110)  # after mkdocs-static-i18n has set up the language's config
def on_config(config):
    """Refuse a ``REPO_URL`` that is no web address; point MkDocs's ``edit_uri`` at
    ``docs/`` on ``REPO_BRANCH``."""
    if not config.repo_url:
        return config
    problem = repo_url_problem(config.repo_url)
    if problem:
        raise PluginError(f"environment variable REPO_URL: {problem}; set it to the repository's web address "
                          "(REPO_URL=https://github.com/org/course) or leave it unset for no repository links")
    problem = branch_problem(_branch())
    if problem:
        raise PluginError(f"environment variable REPO_BRANCH: {problem}; set it to the branch the edit links "
                          f"open, or leave it unset for {DEFAULT_BRANCH!r}")
    root = Path(config.config_file_path).parent
    docs = Path(config.docs_dir).relative_to(root).as_posix()
    config.edit_uri = f"edit/{_branch()}/{docs}/"
    return config


def on_page_context(context, page, config, nav):
    """On a translated page, edit the page's catalog instead of the English Markdown."""
    language, default = language_of(config)
    if not page.edit_url or language == default:
        return context
    project = project_of(config)
    catalog = project.catalog_path(language, page.file.src_uri)
    if catalog.is_file():
        page.edit_url = edit_link(config.repo_url, _branch(), catalog.relative_to(project.root).as_posix())
    return context
