"""The course's source repository, named by the build environment: the header's link to it
and each page's "edit this page" link.

Like ``SITE_URL``, ``REPO_URL`` (``https://github.com/org/course``) is read from the
environment by ``mkdocs.yml`` (``repo_url: !ENV REPO_URL``); without it the site has no
repository link and no edit links (MkDocs sets ``page.edit_url`` only with ``repo_url``,
``mkdocs/structure/pages.py``, ``_set_edit_url``; Material's ``partials/actions.html``
shows the edit action only with ``page.edit_url`` and the ``content.action.edit`` feature,
https://squidfunk.github.io/mkdocs-material/setup/adding-a-git-repository/#code-actions).
``REPO_BRANCH`` (default ``main``) is the branch the edit links open. Links use the
``edit/<branch>/<path>`` form of GitHub, Gitea and Forgejo (MkDocs's ``edit_uri``,
https://www.mkdocs.org/user-guide/configuration/#edit_uri), with paths relative to the
folder of ``mkdocs.yml``, which is taken as the repository's root.
"""
from __future__ import annotations

import re
from urllib.parse import urlsplit

__all__ = ["DEFAULT_BRANCH", "branch_problem", "edit_link", "repo_url_problem"]

DEFAULT_BRANCH = "main"
# A branch name git accepts and a URL path can carry as it is: no spaces, no "..", no
# leading "-" or "/" (git check-ref-format forbids more; these are what could mislead a link).
_BRANCH = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._/-]*")


def repo_url_problem(url: str) -> str | None:
    """Why ``url`` cannot be the course's ``REPO_URL``, or ``None`` when it can.

    Args:
        url: the value of ``repo_url`` (``REPO_URL``) as MkDocs read it.

    Returns:
        ``None`` for an ``http`` or ``https`` URL with a host and no query or fragment
        (``https://github.com/org/course``); else the problem, in a few words.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        return f"{url!r} is not an http(s) URL"
    if not parts.hostname:
        return f"{url!r} has no host"
    if parts.query or parts.fragment:
        return f"{url!r} has a query or fragment, which an edit link cannot follow"
    return None


def branch_problem(branch: str) -> str | None:
    """Why ``branch`` cannot be ``REPO_BRANCH``, or ``None`` when it can.

    Args:
        branch: the branch name, e.g. ``main`` or ``release/2.13``.
    """
    if not _BRANCH.fullmatch(branch) or ".." in branch or branch.endswith(("/", ".")):
        return f"{branch!r} is not a branch name (letters, digits and . _ - /)"
    return None


def edit_link(repo_url: str, branch: str, path: str) -> str:
    """The URL that opens ``path`` of ``branch`` in the repository's web editor.

    Args:
        repo_url: the repository, ``https://github.com/org/course`` (a trailing slash is allowed).
        branch: the branch, ``main``.
        path: the file, relative to the repository root, with ``/`` separators
            (``docs/ddp-basics.md``, ``i18n/ru/ddp-basics.po``).

    Returns:
        ``https://github.com/org/course/edit/main/docs/ddp-basics.md``.
    """
    return f"{repo_url.rstrip('/')}/edit/{branch}/{path}"
