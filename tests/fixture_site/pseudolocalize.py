"""Fill the fixture site's ``fr`` catalogs with a pseudo-translation (run after ``course update``).

Every message gets accented letters (:func:`coursekit.fuzz.pseudo`), with markup and
``%(name)s`` placeholders kept, so a build shows at a glance what is translated and
what would stay English. Usage: ``python tests/fixture_site/pseudolocalize.py``.
"""
from __future__ import annotations

import re
from pathlib import Path

import polib

from coursekit.fuzz import pseudo

_PLACEHOLDER = re.compile(r"(%\(\w+\)[sd]|%%)")


def _fill(text: str) -> str:
    parts = _PLACEHOLDER.split(text)
    return "".join(part if i % 2 else pseudo(part) for i, part in enumerate(parts))


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
