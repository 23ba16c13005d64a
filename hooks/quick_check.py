"""MkDocs hook: the strings of interactive quick-check questions, in the page's language.

A quick check is written as a pymdownx ``details`` block of type ``quiz`` whose options
are a task list (``- [x]`` marks the right one) followed by the explanation; the
segmenter makes each option a message and keeps the marker out of it. Without
JavaScript the block still opens to show the options, the right one ticked, and the
explanation. ``docs/assets/course.js`` turns it into a question with radio buttons and
feedback, using the strings this hook adds to every page that has a quick check.
"""
from __future__ import annotations

import json


from po_i18n.build_context import interface_of
from coursekit.course_strings import QUIZ_CHECK, QUIZ_CHOOSE, QUIZ_RIGHT, QUIZ_WRONG

_MARKER = "    type: quiz"


def on_page_markdown(markdown, page, config, files):
    """Append the quiz strings (JSON, for course.js) to pages that have a quick check."""
    # Decided on the page's source, not its translation: a msgstr is no place for a quiz.
    if _MARKER not in page.file.content_string:
        return markdown
    ui = interface_of(config, "course")  # a broken catalog raises a PluginError: file:line: reason
    strings = {"check": ui.text(QUIZ_CHECK), "right": ui.text(QUIZ_RIGHT), "wrong": ui.text(QUIZ_WRONG),
               "choose": ui.text(QUIZ_CHOOSE)}
    payload = json.dumps(strings, ensure_ascii=False).replace("</", "<\\/")  # cannot close the script
    return markdown.rstrip("\n") + f'\n\n<script type="application/json" id="course-quiz-strings">{payload}</script>\n'
