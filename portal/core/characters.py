"""Characters an export format cannot hold, replaced at the writer.

Names and notes are typed by users and may carry control characters (a pasted ``\\x01``, a stray NUL). XML 1.0,
and so a workbook's cells, cannot hold the C0 controls other than tab, line feed and carriage return (openpyxl
raises ``IllegalCharacterError`` and the export answers 500, for good once the row is frozen in a review
snapshot); PDF text and CSV readers print them as garbage or cut the line. Every writer (``portal.core.csv``,
``portal.core.xlsx``, ``portal.core.pdf``, ``portal.core.pdf_charts``) passes text through :func:`holdable`, so stored rows
that already hold such characters export too. The replacement character shows the reader that something was
there, rather than silently joining the characters either side.
"""
from __future__ import annotations

import re

REPLACEMENT = "\ufffd"
# C0 controls but tab, LF and CR; DEL; lone surrogates; the two non-characters XML forbids.
_UNHOLDABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff\ufffe\uffff]")


def holdable(text: str) -> str:
    """``text`` with every character an export format cannot hold replaced by U+FFFD."""
    return _UNHOLDABLE.sub(REPLACEMENT, text)
