"""The differential fuzzer of the translation engine, seeded and bounded for ``make test``.

Random pages from :func:`po_i18n.fuzz.documents` (the constructs Material and
pymdown-extensions document) are held to properties (a)-(d) of
:func:`po_i18n.fuzz.check` against the site's Markdown engine. ``derandomize=True``
makes every run draw the same pages (a fixed seed); the example count bounds the time
(about 10 s here). The course's ``course bench --only fuzz-segment`` runs 20,000 and more.
Counterexamples the fuzzer found, shrunk, are fixed tests below.
"""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from po_i18n.fuzz import RAW_WORDS, check, documents, quoted_callouts, tab_indented


@settings(max_examples=120, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(documents())
def test_random_pages_round_trip_and_keep_their_structure(page):
    check(page, raw_words=RAW_WORDS)


# Shrunk counterexamples, each once a failure of the property named.
FOUND = {
    "front matter is not prose (d)": "---\ntitle: Page\ntags: [a, b]\n---\n\nalpha\n",
    "a fence's title= is code, not prose (d)": '```py title="train.py"\nprint(value)\n```\n',
    "a callout as a container's first block (c)": '!!! note "alpha"\n    > [!note]\n    > alpha\n    > { .annotate }\n',
    "a fence the engine leaves open inside a list item (d)":
        '- item\n\n    ```md\n    === "Tab"\n        text\n        ```\n\nProse after.\n',
    "code in a list in a block quote keeps the quote open (d)":
        "> - [x] alpha\n>\n>     ```\n>     print(value)\n>     ```\n>\n> - [ ] alpha\n>     1. alpha\n>\n>     2. alpha\n>\n"
        ">         ```\n>         print(value)\n>         ```\n>\n>     3. alpha alpha train alpha alpha\n>\n> - [ ] alpha\n\nalpha\n",
    "an attribute list ending a footnote is text: the back-link follows it (d)":
        "See alpha[^1].\n\n[^1]: alpha\n\n    alpha\n    { #para-id }\n",
    "an unindented marker after an item's paragraph in an admonition is an item there (c)":
        '!!! note "alpha"\n    - alpha\n\n        alpha\n    - alpha\n',
    "a quote's content is a chunk of its own: a marker in it starts a list (c)":
        "alpha\n{ .annotate }\n> /// fancylists | type=a\n> 1. alpha\n> 2. alpha\n> ///\n",
    "a longer closing fence in a tab is text (d)": '=== "Ex"\n\n    ````md\n    === "Inner"\n        text\n        ````\n\nProse after.\n',
}


@settings(max_examples=60, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.one_of(quoted_callouts(), tab_indented()))
def test_callouts_in_quotes_and_tab_indented_bodies_round_trip(block):
    """The grammar's quoted callouts and tab-indented bodies on their own: in
    :func:`documents` they are two choices among many."""
    check(block + "\n", raw_words=RAW_WORDS)


@pytest.mark.parametrize("page", FOUND.values(), ids=FOUND.keys())
def test_counterexamples_found_by_the_fuzzer(page):
    check(page, raw_words=RAW_WORDS)
