"""The user-facing text a template writes outside ``{% translate %}`` and ``{% blocktranslate %}``.

Django's lexer splits a template into text, variable, block and comment tokens. Every token that is not text
(and all that lies inside ``{% blocktranslate %}``, ``{% comment %}``, ``<script>``, ``<style>`` and the
elements that show code: ``<code>``, ``<pre>``, ``<kbd>``, ``<samp>``) is
masked with NULs of the same length, so positions stay those of the source; what is left is HTML, read here
for its text between tags and for the attributes people read (``title``, ``aria-label``, ``placeholder``,
``alt``, a button's ``value``). A piece that holds a letter is text someone reads, unless it is code (a URL,
an id) or listed in ``ALLOWED`` with its reason.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from django.template.base import DebugLexer, TokenType

MASK = "\x00"
READ_ATTRIBUTES = ("title", "aria-label", "placeholder", "alt", "aria-description", "data-confirm")
LETTER = re.compile(r"[^\W\d_]")
# Pieces that are not language: a URL or path, a CSS-ish token, an HTML entity alone.
CODE = re.compile(r"^(https?://\S+|/\S*|#[\w-]+|&[a-z]+;|[\w.-]+\.(svg|png|js|css))$")
# Text that reads the same in every language, with the reason.
ALLOWED = {
    "GENIAC": "the program's name",
    "API": "the name of the interface, the same in Japanese",
    "GB/s": "a unit",
    "busbw": "NCCL's own name for bus bandwidth, as its output prints it",
    "algbw": "NCCL's own name for algorithm bandwidth, as its output prints it",
    "NCCL": "a library's name",
    "aws-ofi-nccl": "a library's name",
    "XID": "NVIDIA's name for a GPU error code",
    "×": "a sign",
    "UTC": "a time zone's name",
    "JST": "a time zone's name",
    "ARN": "AWS's name for a resource identifier",
    "CSV": "a file format's name",
    "PDF": "a file format's name",
    "xlsx": "a file format's name",
    "JSON": "a file format's name",
    "Slack": "a product's name",
    "Grafana": "a product's name",
    "EFA": "AWS's name for its network adapter",
    "AWS": "a company's name",
}
# Scripts and styles are not text; code, pre, kbd and samp show code (paths, commands, headers) as it is typed.
SKIPPED_ELEMENTS = ("script", "style", "code", "pre", "kbd", "samp")


@dataclass(frozen=True)
class Piece:
    """Unmarked text: where it starts in the source, the text, and whether it is an attribute's value."""

    start: int
    end: int
    text: str
    attribute: str = ""

    def line(self, source: str) -> int:
        return source.count("\n", 0, self.start) + 1


def masked(source: str) -> str:
    """``source`` with every non-text token (and blocktranslate, comment blocks) replaced by NULs."""
    out = list(source)
    depth = 0  # inside blocktranslate or comment
    for token in DebugLexer(source).tokenize():
        start, end = token.position
        if token.token_type == TokenType.TEXT and not depth:
            continue
        if token.token_type == TokenType.BLOCK:
            name = token.contents.split()[0] if token.contents else ""
            if name in ("blocktranslate", "blocktrans", "comment"):
                depth += 1
            elif name in ("endblocktranslate", "endblocktrans", "endcomment"):
                depth -= 1
        out[start:end] = MASK * (end - start)
    return "".join(out)


TAG = re.compile(r"<(/?)([a-zA-Z][\w-]*)((?:[^>\"']|\"[^\"]*\"|'[^']*')*)>|<!--.*?-->|<!doctype[^>]*>", re.S | re.I)
ATTRIBUTE = re.compile(r"([\w:-]+)\s*=\s*(\"([^\"]*)\"|'([^']*)')")


def _readable(text: str) -> bool:
    words = [w for w in re.split(rf"[\s{MASK}]+", text) if w]
    for word in words:
        word = word.strip(".,:;()[]·—–-!?\"'")
        if not word or not LETTER.search(word) or CODE.match(word) or word in ALLOWED:
            continue
        return True
    return False


def unmarked(source: str) -> list[Piece]:
    """The pieces of ``source`` that people read and that are not marked for translation."""
    text = masked(source)
    pieces: list[Piece] = []
    position = 0
    skipping = ""
    for match in TAG.finditer(text):
        if not skipping:
            pieces += _data(text, position, match.start())
        closing, name = match.group(1), (match.group(2) or "").lower()
        if skipping:
            if closing and name == skipping:
                skipping = ""
        elif name in SKIPPED_ELEMENTS and not closing:
            skipping = name
        elif match.group(3):
            attrs = match.group(3)
            offset = match.start(3)
            element_is_button = name in ("input",) and re.search(r"type=[\"'](submit|button)[\"']", attrs)
            for attribute in ATTRIBUTE.finditer(attrs):
                key = attribute.group(1).lower()
                value = attribute.group(3) if attribute.group(3) is not None else attribute.group(4)
                if (key in READ_ATTRIBUTES or (key == "value" and element_is_button)) and _readable(value):
                    group = 3 if attribute.group(3) is not None else 4
                    start = offset + attribute.start(group)
                    pieces.append(Piece(start, start + len(value), value, key))
        position = match.end()
    if not skipping:
        pieces += _data(text, position, len(text))
    return pieces


def _data(text: str, start: int, end: int) -> list[Piece]:
    chunk = text[start:end]
    if not _readable(chunk):
        return []
    return [Piece(start, end, chunk)]


def templates(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.suffix in (".html", ".txt") and p.is_file())
