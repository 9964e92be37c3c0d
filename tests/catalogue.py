"""Read the project's gettext catalogue (``locale/<lang>/LC_MESSAGES/django.po``) and compile it, without
msgfmt: the tests check the catalogue itself and run the labels through a freshly compiled copy of it.

polib (a development requirement) reads the catalogue, ``msgctxt`` entries included, and writes the .mo."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import polib

ROOT = Path(__file__).resolve().parent.parent
CATALOGUE = ROOT / "locale" / "ja" / "LC_MESSAGES" / "django.po"

# Python's named placeholders (%(name)s), its positional ones (%s, %d) and format_lazy's ({name}, {}).
NAMED = re.compile(r"%\((\w+)\)[#0 +-]*\d*(?:\.\d+)?[sdifrx]")
POSITIONAL = re.compile(r"%(?!\()[#0 +-]*\d*(?:\.\d+)?[sdifrx]")
BRACED = re.compile(r"\{(\w*)\}")


@dataclass
class Entry:
    msgid: str
    msgctxt: str = ""
    msgid_plural: str = ""
    msgstr: str = ""
    msgstr_plural: dict[int, str] = field(default_factory=dict)
    flags: set[str] = field(default_factory=set)
    obsolete: bool = False
    line: int = 0

    def translations(self) -> list[str]:
        return list(self.msgstr_plural.values()) if self.msgid_plural else [self.msgstr]

    @property
    def key(self) -> tuple[str, str, str]:
        """What gettext looks an entry up by: the context is part of it ("open" and "open" in another sense)."""
        return (self.msgctxt, self.msgid, self.msgid_plural)


def parse(path: Path = CATALOGUE) -> tuple[dict[str, str], list[Entry]]:
    """The header's fields and the entries (the header entry, msgid "", left out), obsolete ones included."""
    catalogue = polib.pofile(str(path))
    entries = [
        Entry(msgid=e.msgid, msgctxt=e.msgctxt or "", msgid_plural=e.msgid_plural or "", msgstr=e.msgstr,
              msgstr_plural={int(i): text for i, text in e.msgstr_plural.items()}, flags=set(e.flags),
              obsolete=bool(e.obsolete), line=e.linenum)
        for e in catalogue
    ]
    return dict(catalogue.metadata), entries


def placeholders(text: str) -> tuple[frozenset[str], int, frozenset[str]]:
    """Named placeholders, the number of positional ones, and format_lazy's braced names."""
    return (frozenset(NAMED.findall(text)), len(POSITIONAL.findall(text.replace("%%", ""))),
            frozenset(BRACED.findall(text)))


def compile_to(directory: Path, path: Path = CATALOGUE) -> Path:
    """Write ``<directory>/ja/LC_MESSAGES/django.mo`` from the catalogue (translated entries only: neither
    fuzzy nor obsolete ones; a context is written as ``msgctxt\\x04msgid``, as gettext reads it); return
    ``directory`` for LOCALE_PATHS."""
    target = directory / "ja" / "LC_MESSAGES" / "django.mo"
    target.parent.mkdir(parents=True, exist_ok=True)
    polib.pofile(str(path)).save_as_mofile(str(target))
    return directory
