"""Text into reportlab's paragraph markup, for every PDF the portal draws.

reportlab's ``Paragraph`` reads its text as markup: ``<img src="…"/>`` opens a file on the server (and
embeds it when it is an image), ``<font>``, ``<b>`` and ``<a>`` restyle or link, and a bare ``&`` starts an
entity. Names, notes and summaries are typed by users, so every value reaches a paragraph through
``markup`` (or ``paragraph``) and prints as the characters it holds. Headings the portal writes itself
go through it too, so that a value spliced into one cannot escape.
"""
from __future__ import annotations

from xml.sax.saxutils import escape

from django.utils import translation

from portal.core.characters import holdable


def markup(value) -> str:
    """``value`` as paragraph markup that prints it literally (None prints as nothing), without the characters
    a PDF's text cannot hold (``portal.core.characters``)."""
    return escape("" if value is None else holdable(str(value)))


def paragraph(value, style):
    """A reportlab paragraph of ``value``'s text, never of its markup."""
    from reportlab.platypus import Paragraph  # deferred: reportlab is heavy

    return Paragraph(markup(value), style)


# Japanese PDFs use one of the CJK fonts every PDF reader knows (Adobe-Japan1, predefined since PDF 1.2), through
# reportlab's CID support: nothing to install or embed, a page weighs what the English one does, and the text
# stays text (copy, search, extraction). docs/DECISIONS.md weighs this against embedding a TrueType font.
JAPANESE_FONT = "HeiseiKakuGo-W5"
LATIN_FONT, LATIN_BOLD = "Helvetica", "Helvetica-Bold"


def _japanese() -> bool:
    return (translation.get_language() or "").split("-")[0] == "ja"


def font(bold: bool = False) -> str:
    """The font name for the active language (the Japanese one has a single weight)."""
    if _japanese():
        from reportlab.pdfbase import pdfmetrics  # deferred: reportlab is heavy
        from reportlab.pdfbase.cidfonts import UnicodeCIDFont  # deferred: reportlab is heavy

        if JAPANESE_FONT not in pdfmetrics.getRegisteredFontNames():
            pdfmetrics.registerFont(UnicodeCIDFont(JAPANESE_FONT))
        return JAPANESE_FONT
    return LATIN_BOLD if bold else LATIN_FONT


def stylesheet():
    """reportlab's sample styles in the active language's font; Japanese lines break between any two characters
    (``wordWrap="CJK"``), as Japanese has no spaces between words."""
    from reportlab.lib.styles import getSampleStyleSheet  # deferred: reportlab is heavy

    styles = getSampleStyleSheet()
    if _japanese():
        name = font()
        for style in styles.byName.values():
            if hasattr(style, "fontName"):
                style.fontName = name
                style.wordWrap = "CJK"
    return styles
