"""Python-Markdown extension: what follows each top-level ``h2``, up to the next ``h2``,
becomes one ``<div class="course-section">`` right after that heading.

Why: a lesson is one long page (13-19 ``h2`` sections, about 3,300 elements). With each
section's body in its own element, the stylesheet can give it ``content-visibility: auto``,
so the browser styles and lays out only the bodies near the viewport at load instead of
the whole page (CSS Containment Module Level 2, ``content-visibility``; measured with
Lighthouse in issue 17). The headings stay outside, at the top level: Material's table of
contents reads every heading's position at load (``offsetTop``), and a heading inside a
skipped element would make the browser lay that element out after all. Reading order,
ids and text are unchanged; only the element tree gains one level.

A short page is left as it is (option ``min_sections``, default 8 top-level ``h2``): its
whole layout costs little, and a skipped body there is mostly on the first screen, where
its placeholder height (``contain-intrinsic-size``) only makes the first paint wrong. On the
home page (4 sections) the body under the first heading was painted at its 60rem estimate,
then at its real height, moving the next heading up: Lighthouse measured a layout shift of
0.039 and a late largest paint, and performance 96-98; with the bodies not skipped, 99
(issue 33, Lighthouse benchmark index about 2,700).

Enable it in ``mkdocs.yml`` under ``markdown_extensions`` as ``- coursekit.sections`` or
``- coursekit.sections: {min_sections: N}``. A bad ``min_sections`` raises ``ValueError``
when the extension loads; MkDocs reports it, as any extension's error, under "Failed to
load extension 'coursekit.sections'" with the frames that raised it.
"""

from __future__ import annotations

import xml.etree.ElementTree as etree

from markdown import Markdown
from markdown.extensions import Extension
from markdown.treeprocessors import Treeprocessor

SECTION_CLASS = "course-section"

# After the inline patterns (20) and the footnotes' own treeprocessors (50, 19, 15), so the
# tree is complete; before prettify (10), which then indents the new elements like any
# block, and before attr_list (8) and toc (5), which find headings anywhere in the tree.
# Priorities: Python-Markdown's treeprocessors.build_treeprocessors and each extension.
PRIORITY = 12
# Lessons have 13-19 top-level sections; the home page 4, the verification page 3, a
# program's page (hooks/programs.py) 2.
MIN_SECTIONS = 8


class SectionTreeprocessor(Treeprocessor):
    """Wraps the body of each top-level ``h2`` section in a ``div``.

    Args:
        md: the Markdown instance.
        min_sections: the fewest top-level ``h2`` headings a document needs for its
            sections to be wrapped (an int, at least 1); a shorter one is left unchanged.
    """

    def __init__(self, md: Markdown, min_sections: int = MIN_SECTIONS) -> None:
        super().__init__(md)
        self.min_sections = min_sections

    def run(self, root: etree.Element) -> None:
        """Move the root's children between one top-level ``h2`` and the next (or the end)
        into a new ``div.course-section`` placed right after the first of the two.

        Args:
            root: the document's root element (Python-Markdown's ``div``); changed in place.
            Children before the first ``h2`` stay where they are, a heading directly
            followed by the next one gets no body, and a document without a top-level
            ``h2``, or with fewer than ``min_sections`` of them, is left unchanged.
            Headings nested in other blocks (an admonition, a tab) never start a section.

        Returns:
            None (Python-Markdown then keeps ``root``).
        """
        children = list(root)
        if sum(child.tag == "h2" for child in children) < self.min_sections:
            return
        for child in children:
            root.remove(child)
        seen_heading, body = False, None
        for child in children:
            if child.tag == "h2":
                root.append(child)
                seen_heading, body = True, None
            elif not seen_heading:
                root.append(child)
            else:
                if body is None:
                    body = etree.SubElement(root, "div", {"class": SECTION_CLASS})
                    body.text = "\n"
                body.append(child)


class SectionExtension(Extension):
    """Registers :class:`SectionTreeprocessor` (see the module docstring)."""

    def __init__(self, **kwargs) -> None:
        self.config = {
            "min_sections": [MIN_SECTIONS, "fewest top-level h2 headings for a page to be "
                             "wrapped; a shorter page is left unchanged"],
        }
        super().__init__(**kwargs)

    def extendMarkdown(self, md: Markdown) -> None:  # noqa: N802 (Python-Markdown's name)
        min_sections = self.getConfig("min_sections")
        if not isinstance(min_sections, int) or isinstance(min_sections, bool) or min_sections < 1:
            raise ValueError(f"coursekit.sections: min_sections is {min_sections!r}; "
                             "set it to a whole number of at least 1 under markdown_extensions")
        md.treeprocessors.register(SectionTreeprocessor(md, min_sections), "course_sections", PRIORITY)


def makeExtension(**kwargs) -> SectionExtension:  # noqa: N802 (Python-Markdown's entry point)
    """Python-Markdown's entry point for ``extensions=["coursekit.sections"]``.

    Args:
        **kwargs: extension options: ``min_sections`` (int, default 8).

    Returns:
        A :class:`SectionExtension`.
    """
    return SectionExtension(**kwargs)
