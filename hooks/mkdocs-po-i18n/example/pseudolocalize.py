"""Fill the fixture site's ``fr`` catalogs with a pseudo-translation (run after ``po-i18n update``).

Every message gets accented letters (:func:`po_i18n.fuzz.pseudo`) and a few Cyrillic
look-alikes (``т``, ``к``, ``р``, ``х``), with markup and ``%(name)s`` placeholders kept,
so a build shows at a glance what is translated and what would stay English. The
Cyrillic letters matter: like a real Russian or Japanese heading, they slug to
something else than the English (toc's slugify keeps ASCII only), so the English
anchors the renderer writes are what keeps ``#section``. Usage:
``python hooks/mkdocs-po-i18n/example/pseudolocalize.py``.
"""
from __future__ import annotations

import re
from pathlib import Path

import polib

from po_i18n.fuzz import pseudo

_PLACEHOLDER = re.compile(r"(%\(\w+\)[sd]|%%)")
_CYRILLIC = str.maketrans("tkpx", "ткрх")
_MARKUP = re.compile(r"(`+[^`]*`+|\]\([^)]*\)|\]\[[^\]]*\]|\[\^[^\]]+\]|<[^>]+>|&\w+;|\{[^}]*\})")


def pseudo_locale(text: str) -> str:
    """The fixture's pseudo-translation of one message (str -> str)."""
    parts = _PLACEHOLDER.split(text)
    out = []
    for i, part in enumerate(parts):
        if i % 2:
            out.append(part)
            continue
        pieces = _MARKUP.split(pseudo(part))
        out.append("".join(p if j % 2 else p.translate(_CYRILLIC) for j, p in enumerate(pieces)))
    return "".join(out)


_fill = pseudo_locale


def main() -> None:
    for path in sorted((Path(__file__).parent / "i18n" / "fr").rglob("*.po")):
        catalog = polib.pofile(str(path), wrapwidth=0)
        forms = int(re.search(r"nplurals=(\d+)", catalog.metadata["Plural-Forms"]).group(1))
        for entry in catalog:
            if entry.msgid_plural:
                entry.msgstr_plural = {n: _fill(entry.msgid if n == 0 else entry.msgid_plural) for n in range(forms)}
            else:
                entry.msgstr = _fill(entry.msgid)
            if "fuzzy" in entry.flags:
                entry.flags.remove("fuzzy")
        catalog.save(str(path))


if __name__ == "__main__":
    main()
