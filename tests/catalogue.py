"""Read the project's gettext catalogue (``locale/<lang>/LC_MESSAGES/django.po``) and compile it, without
msgfmt: the tests check the catalogue itself and run the labels through a freshly compiled copy of it."""
from __future__ import annotations

import ast
import re
import struct
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CATALOGUE = ROOT / "locale" / "ja" / "LC_MESSAGES" / "django.po"

# Python's named placeholders (%(name)s), its positional ones (%s, %d) and format_lazy's ({name}, {}).
NAMED = re.compile(r"%\((\w+)\)[#0 +-]*\d*(?:\.\d+)?[sdifrx]")
POSITIONAL = re.compile(r"%(?!\()[#0 +-]*\d*(?:\.\d+)?[sdifrx]")
BRACED = re.compile(r"\{(\w*)\}")


@dataclass
class Entry:
    msgid: str
    msgid_plural: str = ""
    msgstr: str = ""
    msgstr_plural: dict[int, str] = field(default_factory=dict)
    flags: set[str] = field(default_factory=set)
    obsolete: bool = False
    line: int = 0

    def translations(self) -> list[str]:
        return list(self.msgstr_plural.values()) if self.msgid_plural else [self.msgstr]


def _unquote(text: str) -> str:
    return ast.literal_eval(text)  # a PO string is a double-quoted C string; Python reads the escapes alike


def parse(path: Path = CATALOGUE) -> tuple[dict[str, str], list[Entry]]:
    """The header's fields and the entries (the header entry, msgid "", left out)."""
    entries: list[Entry] = []
    current: Entry | None = None
    target: tuple[str, int | None] | None = None
    flags: set[str] = set()
    obsolete = False

    def finish():
        nonlocal current
        if current is not None:
            entries.append(current)
        current = None

    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.strip()
        if line.startswith("#~"):
            obsolete, line = True, line[2:].strip()
        if not line:
            finish()
            flags, obsolete = set(), False
            continue
        if line.startswith("#,"):
            flags |= {f.strip() for f in line[2:].split(",")}
            continue
        if line.startswith("#"):
            continue
        keyword, _, rest = line.partition(" ")
        if keyword == "msgid":
            finish()
            current = Entry(msgid=_unquote(rest), flags=flags, obsolete=obsolete, line=number)
            target = ("msgid", None)
        elif keyword == "msgid_plural":
            current.msgid_plural = _unquote(rest)
            target = ("msgid_plural", None)
        elif keyword == "msgstr":
            current.msgstr = _unquote(rest)
            target = ("msgstr", None)
        elif keyword.startswith("msgstr["):
            index = int(keyword[7:-1])
            current.msgstr_plural[index] = _unquote(rest)
            target = ("msgstr_plural", index)
        elif line.startswith('"'):
            name, index = target
            if index is None:
                setattr(current, name, getattr(current, name) + _unquote(line))
            else:
                current.msgstr_plural[index] += _unquote(line)
        else:
            raise ValueError(f"{path}:{number}: cannot read {raw!r}")
    finish()
    header = next((e for e in entries if e.msgid == ""), None)
    fields = dict(line.split(": ", 1) for line in header.msgstr.splitlines() if ": " in line) if header else {}
    return fields, [e for e in entries if e.msgid != ""]


def placeholders(text: str) -> tuple[frozenset[str], int, frozenset[str]]:
    """Named placeholders, the number of positional ones, and format_lazy's braced names."""
    return (frozenset(NAMED.findall(text)), len(POSITIONAL.findall(text.replace("%%", ""))),
            frozenset(BRACED.findall(text)))


def compile_to(directory: Path, path: Path = CATALOGUE) -> Path:
    """Write ``<directory>/ja/LC_MESSAGES/django.mo`` from the catalogue (GNU .mo layout, little-endian);
    return ``directory`` for LOCALE_PATHS."""
    fields, entries = parse(path)
    header = "".join(f"{key}: {value}\n" for key, value in fields.items())
    pairs = {"": header}
    for e in entries:
        if e.obsolete or "fuzzy" in e.flags:
            continue
        if e.msgid_plural:
            key = f"{e.msgid}\0{e.msgid_plural}"
            pairs[key] = "\0".join(e.msgstr_plural[i] for i in sorted(e.msgstr_plural))
        else:
            pairs[e.msgid] = e.msgstr
    keys = sorted(pairs)
    ids = [k.encode("utf-8") for k in keys]
    strs = [pairs[k].encode("utf-8") for k in keys]
    count = len(keys)
    ids_table, strs_table = 7 * 4, 7 * 4 + count * 8
    data_start = strs_table + count * 8
    offsets, blob = [], b""
    for item in ids:
        offsets.append((len(item), data_start + len(blob)))
        blob += item + b"\0"
    for item in strs:
        offsets.append((len(item), data_start + len(blob)))
        blob += item + b"\0"
    out = struct.pack("<7I", 0x950412DE, 0, count, ids_table, strs_table, 0, 0)
    out += b"".join(struct.pack("<2I", length, offset) for length, offset in offsets)
    target = directory / "ja" / "LC_MESSAGES" / "django.mo"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(out + blob)
    return directory
