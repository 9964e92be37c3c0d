"""Text into reportlab's paragraph markup, for every PDF the portal draws.

reportlab's ``Paragraph`` reads its text as markup: ``<img src="…"/>`` opens a file on the server (and
embeds it when it is an image), ``<font>``, ``<b>`` and ``<a>`` restyle or link, and a bare ``&`` starts an
entity. Names, notes and summaries are typed by users, so every value reaches a paragraph through
``markup`` (or ``paragraph``) and prints as the characters it holds. Headings the portal writes itself
go through it too, so that a value spliced into one cannot escape.
"""
from __future__ import annotations

from xml.sax.saxutils import escape


def markup(value) -> str:
    """``value`` as paragraph markup that prints it literally (None prints as nothing)."""
    return escape("" if value is None else str(value))


def paragraph(value, style):
    """A reportlab paragraph of ``value``'s text, never of its markup."""
    from reportlab.platypus import Paragraph

    return Paragraph(markup(value), style)
