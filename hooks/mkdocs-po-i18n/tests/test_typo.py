"""The typo-fix rule of ``po-i18n update --keep-translations`` (:mod:`po_i18n.typo`), one
case per clause: what passes is a spelling fix, what does not is named by its reason."""
from __future__ import annotations

import pytest

from po_i18n.markdown_engine import DEFAULT_ENGINE
from po_i18n.safety import TranslationCheck
from po_i18n.typo import edits, more_than_typo, shown_change

PAGE = TranslationCheck(DEFAULT_ENGINE).page("")


@pytest.mark.parametrize("old, new", [
    ("Wrap teh model in DDP.", "Wrap the model in DDP."),                      # two letters swapped
    ("Each process must recieve its shard.", "Each process must receive its shard."),
    ("Data paralel training.", "Data parallel training."),                     # a letter missing
    ("Install pytorch first.", "Install PyTorch first."),                       # case
    ("Launch it  with `torchrun`.", "Launch it with `torchrun`."),             # a double space
    ("Read [the lesson](ddp.md) and **its** ntoes.", "Read [the lesson](ddp.md) and **its** notes."),  # markup kept
])
def test_a_spelling_fix_is_a_typo_fix(old, new):
    assert more_than_typo(old, new, PAGE, ("paragraph",)) is None


@pytest.mark.parametrize("old, new, reason", [
    ("Run 2 processes.", "Run 3 processes.", "'2' became '3' (only the letters of words may change"),
    ("Set it, then run.", "Set it then run.", "',' became nothing"),
    ("It is alot faster.", "It is a lot faster.", "'alot' became 'a lot'"),
    ("Click on the button.", "Click in the button.", "the word 'on' became 'in' (1 of its 2 characters changed"),
    ("Start ten processes.", "Start two processes.", "the word 'ten' became 'two'"),
    ("A short course.", "A brief course.", "the word 'short' became 'brief'"),
    ("Teh quik brwn fox jumsp over it.", "The quick brown fox jumps over it.",
     "6 characters of words changed, more than the 2 a typo fix may change in 34 characters (5%)"),
    ("Call `bakward()` once.", "Call `backward()` once.", "it renders differently: inline code `bakward()`"),
    ("See [the lesson](ddp-basic.md).", "See [the lesson](ddp-basics.md).",
     "it renders differently: link target 'ddp-basic.md' changed to 'ddp-basics.md'"),
    ("Read <span class=\"nte\">this</span>.", "Read <span class=\"note\">this</span>.", "it renders differently"),
])
def test_more_than_a_spelling_fix_is_named(old, new, reason):
    found = more_than_typo(old, new, PAGE, ("paragraph",))
    assert found is not None and reason in found, found


def test_edits_count_what_difflib_aligns():
    assert [edits("teh", "the"), edits("paralel", "parallel"), edits("same", "same"), edits("ten", "two")] == [2, 1, 0, 2]


def test_the_change_is_shown_with_whole_words_around_it():
    old = "A short, hands-on course on traning one model with many processes in PyTorch."
    assert shown_change(old, old.replace("traning", "training")) == (
        "…hands-on course on traning one model with…", "…hands-on course on training one model with…")
    assert shown_change("Lesons", "Lessons") == ("Lesons", "Lessons")
