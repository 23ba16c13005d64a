"""``po-i18n update --keep-translations``: keep the translations of messages whose English
changed by a typo fix current in a merged catalog, instead of fuzzy.

:func:`po_i18n.catalog.merge` does what ``msgmerge`` does (gettext manual, "Invoking the
msgmerge Program"): a changed message takes the translation of its old entry as fuzzy,
with the old English as ``#| msgid`` ("Fuzzy Entries"). When the writer asks for it,
this step looks at each such message of one catalog and, where the change is only a
typo fix (:func:`po_i18n.typo.more_than_typo`) and the translation passes the safety
judgement against the new English, makes it current again: ``msgid`` and ``msgstr``
updated together, what po4a's ``msguntypot`` does for every message that changed
between two templates (see :mod:`po_i18n.typo`).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import polib

from .catalog import key
from .safety import PageCheck
from .typo import more_than_typo

__all__ = ["Change", "keep_translations"]

WAS_FUZZY = "it was fuzzy before this update (a translator has not confirmed it since its English last changed)"


@dataclass(frozen=True)
class Change:
    """One message of a catalog whose English changed in this update.

    Attributes:
        old: the previous msgid (what ``#| msgid`` would hold).
        new: the new msgid.
        reason: ``None`` when its translation was kept current; else why it stays fuzzy.
    """

    old: str
    new: str
    reason: str | None

    @property
    def kept(self) -> bool:
        """Whether the translation was kept current (not fuzzy)."""
        return self.reason is None


def keep_translations(old: polib.POFile | None, merged: polib.POFile, page: PageCheck,
                      kinds: Mapping[str, tuple[str, ...]]) -> list[Change]:
    """Make current the messages of ``merged`` that this merge made fuzzy only because a
    typo was fixed in their English; ``merged`` is changed in place.

    A message is looked at when :func:`po_i18n.catalog.merge` gave it the translation of
    an entry of ``old`` whose msgid left the page (fuzzy, ``#| msgid`` naming that entry,
    the same ``msgstr``, no plural, no context). Its translation is kept current (the
    ``fuzzy`` flag and the ``#|`` lines removed, comments and other flags as merge left
    them) when the old entry was not fuzzy, the change is a typo fix
    (:func:`po_i18n.typo.more_than_typo`) and the translation passes the safety judgement
    (:meth:`po_i18n.safety.PageCheck.problems`) against the new msgid. Any other stays as
    merge left it. Entries fuzzy before, translations offered from another catalog
    (``--compendium``) and a ``msgctxt``'s are never made current.

    Args:
        old: the catalog before the update (``None``: a new catalog, nothing to keep).
        merged: the result of :func:`po_i18n.catalog.merge` of ``old``.
        page: the safety check of the catalog's English page (``checker.page("")`` for
            an interface catalog).
        kinds: the kinds each msgid has on its page (``"paragraph"``, ``"heading"``…).

    Returns:
        One :class:`Change` per message looked at, in catalog order.
    """
    if old is None:
        return []
    before = {key(e): e for e in old if not e.obsolete}
    now = {key(e) for e in merged if not e.obsolete}
    found: list[Change] = []
    for entry in merged:
        if (entry.obsolete or not entry.fuzzy or entry.msgctxt is not None or entry.msgid_plural
                or entry.previous_msgctxt is not None or not entry.previous_msgid or key(entry) in before):
            continue
        prior = before.get((None, entry.previous_msgid))
        if prior is None or prior.msgid_plural or key(prior) in now or prior.msgstr != entry.msgstr:
            continue  # not this catalog's old entry of the message: a compendium's, or one still on the page
        reason = WAS_FUZZY if prior.fuzzy else more_than_typo(prior.msgid, entry.msgid, page, kinds.get(entry.msgid, ()))
        if reason is None:
            problems = page.problems(entry.msgid, entry.msgstr, kinds.get(entry.msgid, ()))
            if problems:
                reason = f"its translation does not pass the safety check against the new English: {'; '.join(problems)}"
        if reason is None:
            entry.flags = [f for f in entry.flags if f != "fuzzy"]
            entry.previous_msgctxt = entry.previous_msgid = entry.previous_msgid_plural = None
        found.append(Change(prior.msgid, entry.msgid, reason))
    return found
