"""Each code block highlighted once per process, not once per language.

mkdocs-static-i18n builds every page once per language, and a translated page keeps the
English page's code blocks byte for byte, so pymdownx.highlight hands Pygments the same
code with the same lexer and formatter options five times in a five-language build (and
once more for each ``mkdocs serve`` rebuild). Pygments' ``highlight(code, lexer,
formatter)`` is a pure function of the code, the lexer's class and options and the
formatter's class and options (``pygments.lexer.Lexer.__init__`` and
``pygments.formatter.Formatter.__init__`` keep every option in ``.options``), so
:func:`install` puts a memo of it where pymdownx.highlight calls it
(``pymdownx.highlight.highlight``, the name that module imports from ``pygments``). A call
the memo cannot key exactly (an output file, a lexer with filters added after it was made,
an option that is not hashable) goes to Pygments as before. The pages are the same byte for
byte; ``hooks/mkdocs-po-i18n/tests/test_highlight_memo.py`` builds a site both ways.
"""
from __future__ import annotations

from collections import OrderedDict

__all__ = ["MAX_ENTRIES", "install", "installed", "memo", "shared"]

MAX_ENTRIES = 4096  # highlighted blocks kept (most recently used); the course has about 200


def _frozen(value):
    """``value`` as a hashable key part: mappings sorted, lists as tuples."""
    if isinstance(value, dict):
        return ("dict", tuple(sorted((str(k), _frozen(v)) for k, v in value.items())))
    if isinstance(value, (list, tuple)):
        return ("seq", tuple(_frozen(v) for v in value))
    hash(value)  # TypeError for anything else unhashable: the caller does not memoize
    return value


def memo(highlight):
    """A memo of ``highlight(code, lexer, formatter, outfile=None) -> str`` (Pygments' own).

    Args:
        highlight: the function to remember (``pygments.highlight``).

    Returns:
        A function with its signature, returning the same ``str`` for the same code, lexer
        (class, options) and formatter (class, options, and pymdownx's
        ``pymdownx_inline``, set from an option it then rewrites); ``.hits`` and
        ``.misses`` count lookups, ``.inner`` is ``highlight``.
    """
    done: OrderedDict = OrderedDict()

    def remembered(code, lexer, formatter, outfile=None):
        if outfile is not None or getattr(lexer, "filters", None):
            return highlight(code, lexer, formatter, outfile)
        try:
            key = (code, type(lexer), _frozen(lexer.options), type(formatter), _frozen(formatter.options),
                   getattr(formatter, "pymdownx_inline", None))
            found = done.get(key)
        except (AttributeError, TypeError):
            return highlight(code, lexer, formatter)
        if found is not None:
            done.move_to_end(key)
            remembered.hits += 1
            return found
        remembered.misses += 1
        found = done[key] = highlight(code, lexer, formatter)
        if len(done) > MAX_ENTRIES:
            done.popitem(last=False)
        return found

    remembered.hits = remembered.misses = 0
    remembered.inner = highlight
    return remembered


def shared(factory):
    """One object per distinct set of arguments: ``factory(*args, **options)`` called once
    for each (``args``, ``options``) and its result given again after that.

    For what pymdownx.highlight makes afresh for every code block and then only reads: its
    ``BlockHtmlFormatter``/``InlineHtmlFormatter`` (a Pygments ``HtmlFormatter``, whose
    ``__init__`` builds the style's whole stylesheet, about 0.8 ms a block; ``format``
    reads the options and fills a cache of span openers that depends only on them) and
    ``get_lexer_by_name``'s lexer (``get_tokens`` keeps no state between calls). Arguments
    that cannot be keyed (not hashable) make a new object, as before.

    Args:
        factory: a class or function of hashable, list or mapping arguments.

    Returns:
        A function with ``factory``'s signature; ``.inner`` is ``factory``.
    """
    made: OrderedDict = OrderedDict()

    def make(*args, **options):
        try:
            key = (_frozen(args), _frozen(options))
        except TypeError:
            return factory(*args, **options)
        found = made.get(key)
        if found is None:
            found = made[key] = factory(*args, **dict(options))
            if len(made) > MAX_ENTRIES:
                made.popitem(last=False)
        else:
            made.move_to_end(key)
        return found

    make.inner = factory
    return make


def installed() -> bool:
    """Whether pymdownx.highlight calls the memo (False without pymdownx or Pygments)."""
    try:
        from pymdownx import highlight as module
    except ImportError:
        return False
    return hasattr(getattr(module, "highlight", None), "inner")


def install() -> None:
    """Make pymdownx.highlight call a memo of Pygments' ``highlight`` (once per process;
    nothing happens without pymdownx or Pygments)."""
    try:
        from pymdownx import highlight as module
    except ImportError:
        return
    current = getattr(module, "highlight", None)
    if current is not None and not hasattr(current, "inner"):
        module.highlight = memo(current)
    for name in ("BlockHtmlFormatter", "InlineHtmlFormatter", "get_lexer_by_name"):
        current = getattr(module, name, None)
        if current is not None and not hasattr(current, "inner"):
            setattr(module, name, shared(current))
