"""The verified-output block's placeholder line: the placeholders are joined as a list of
the language being built (CLDR's list patterns, through Babel), not with an English ", "."""
from __future__ import annotations

import polib
import pytest

from coursekit.gate import verified_output
from coursekit.course_strings import OUTPUT_PLACEHOLDERS
from po_i18n.interface import Interface
from coursekit.verification import Record

RECORD = Record(sha256="0" * 64, files={}, torch="2.13.0", python="3.12", backend="gloo", device="cpu",
                device_count=0, nproc_per_node=2, nnodes=1, test="tests/snippets/x.py", bare_runs=3,
                output={"rank 0": ["store at localhost:<port>", "pid <pid>"], "rank 1": ["rendezvous id <id>"]})


def _interface(language: str, label: str) -> Interface:
    catalog = polib.POFile()
    catalog.metadata = {"Language": language, "Content-Type": "text/plain; charset=UTF-8",
                        "Plural-Forms": "nplurals=2; plural=(n != 1);"}
    catalog.append(polib.POEntry(msgid=OUTPUT_PLACEHOLDERS.msgid, msgstr=label))
    return Interface(catalog)


def _placeholder_line(ui: Interface) -> str:
    return next(line for line in verified_output(RECORD, ui).splitlines() if "`<port>`" in line)


@pytest.mark.parametrize("language, label, expected", [
    ("en", None, "Values that change from run to run are shown as: `<port>`, `<pid>`, and `<id>`"),
    ("ja", "実行するたびに変わる値は、次の記号に置き換えて表示しています：",
     "実行するたびに変わる値は、次の記号に置き換えて表示しています：`<port>`、`<pid>`、`<id>`"),
    ("ru", "Значения заменены на:", "Значения заменены на: `<port>`, `<pid>` и `<id>`"),
    ("tr", "Değerler şöyle gösterilir:", "Değerler şöyle gösterilir: `<port>`, `<pid>` ve `<id>`"),
    ("sv", "Värden visas som:", "Värden visas som: `<port>`, `<pid>` och `<id>`"),
    ("xx", "Values:", "Values: `<port>`, `<pid>`, `<id>`"),  # a locale CLDR does not know
])
def test_placeholders_are_joined_as_a_list_of_the_language(language, label, expected):
    ui = Interface() if label is None else _interface(language, label)
    assert _placeholder_line(ui) == expected
