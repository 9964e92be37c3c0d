"""Read a Prometheus text exposition straight into the health readings, at the speed of reading it.

``prometheus_client`` builds a ``Sample`` (a label dict, a float, a timestamp) for every line and the
summary then folds a million of them into a few numbers per GPU: for a 2,000-node scrape that is most of a
minute of building objects nobody keeps. This reader goes through the text in blocks, once, and keeps only
what ``prometheus.Scrape`` holds. It reads exactly what ``prometheus_client`` reads — the same families,
the same counts, the same refusals at the same line — and the tests hold it to that: the library stays
the oracle (``oracle_parse``), run against this reader over every real scrape in the tests and over
generated ones.

Why it is fast:

* Label sets repeat: every family of a GPU carries the same ``{gpu="0",UUID=…,Hostname=…}`` text, every
  family of an EFA device the same ``{device=…,instance=…}``. Each distinct label text is parsed once (a
  compiled regex for the common shape, escapes included) and then found in a dict: the line costs a
  prefix test, two slices, a look-up and a ``float``. The cached entry points at the GPU's (or device's)
  working record, so the families the summary does not read (clocks, temperatures, byte counters) only
  mark which GPUs and devices exist, with no parsing at all.
* Families of other exporters are recognised by their name and only checked (the line's shape, its
  value), never folded.
* Anything unusual — a backslash where the label boundary is, spaces in odd places, a quoted name,
  ``__name__`` inside the braces, a timestamp, an exemplar (``# {…}``) — takes the slow path, a line parser
  that follows ``prometheus_client``'s own grammar (its quirks included: it reads the first and the last
  token after the labels, so an exemplar is accepted). Only such lines pay for it.

What a paste adds around a scrape (a shell command line, curl's meter, fences, ``...``) is removed by
``prometheus.PastedLines``'s cleaning, the same function the page's paste goes through.
"""
from __future__ import annotations

import codecs
import io
import re
import string
import sys
from collections.abc import Iterable

from prometheus_client.parser import parse_labels, text_fd_to_metric_families

from clusters.health.readers import prometheus
from clusters.health.readers.prometheus import (
    _EFA_SLOT,
    _GPU_SLOTS,
    _PARSE_ERRORS,
    DCGM_BLANK_THRESHOLD,
    DCGM_FIELDS,
    EFA_PREFIX,
    EFA_RECORD_LENGTH,
    NAMESPACE,
    NEURONCORE_UTILIZATION,
    POD,
    UTILIZATION_FIELDS,
    UUID,
    XID,
    XID_COUNT_FAMILIES,
    XID_MSG,
    EfaReading,
    ParseError,
    PastedLines,
    Scrape,
    _as_text,
    _gpu_key,
    _gpu_reading,
    host_of,
    neuron_sample,
    odd_xid,
    odd_xid_note,
)

BLOCK = 1 << 18  # 256 KiB of gzip stream at a time: the block, its text and its lines stay small

_METRIC_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_NAME_END = re.compile(r"[{\s]")
_VALUE = r'"(?:[^"\\]|\\.)*"'
_LABEL_NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
_LABELS = re.compile(rf"(?:{_LABEL_NAME}={_VALUE},)*(?:{_LABEL_NAME}={_VALUE},?)?")
_PAIR = re.compile(rf'({_LABEL_NAME})="((?:[^"\\]|\\.)*)"')
_ESCAPE = re.compile(r'\\[\\n"]')
_ESCAPES = {"\\\\": "\\", "\\n": "\n", '\\"': '"'}
_ODD_SPACE = re.compile('["\x1c-\x1f]')  # str.split() splits on these, prometheus_client's splitting does not
_TYPES = ("counter", "gauge", "summary", "histogram", "gaugehistogram", "unknown", "info", "stateset")
_SUFFIXES = {"counter": ("",), "gauge": ("",), "summary": ("_count", "_sum", ""), "histogram": ("_count", "_sum", "_bucket")}
_HOT = ("DCGM_", "node_", "# HELP", "# TYPE")  # lines PastedLines passes untouched

SKIP, DCGM, EFA, NEURON = range(4)
_NO_SERIES = object()  # a label set without a gpu/device label: counted, folded nowhere


def read(source) -> Scrape:
    """Read one exposition — a string, bytes, a binary file (read in blocks) or an iterable of lines — into
    a ``Scrape``; raise ``ParseError`` (with ``.line``) for what ``prometheus_client`` would refuse, or for
    text without DCGM or EFA series."""
    reader = _Reader()
    if isinstance(source, (str, bytes, bytearray)):
        source = _as_text(source)  # empty, binary or not UTF-8: refused before any line is read
    try:
        if isinstance(source, str):
            reader.feed_text(source)
        elif hasattr(source, "read"):
            reader.feed_stream(source)
        elif hasattr(source, "__iter__"):
            reader.feed_lines(source)
        else:
            raise ParseError(f"expected text, got {type(source).__name__}")
        return reader.finish()
    except ParseError as exc:
        pasted = reader.pasted
        if pasted.nonblank == 0 and not exc.line:
            raise ParseError("input is empty") from None
        if not exc.line and pasted.notes and not pasted.kept:
            raise ParseError(f"{exc}; the input held only {', '.join(pasted.notes)}") from None
        raise
    except UnicodeDecodeError as exc:
        raise ParseError(f"input is not UTF-8 text ({exc.reason})", reader.number + 1) from None
    except _PARSE_ERRORS as exc:
        line = reader.pasted.last.strip()
        shown = line if len(line) <= 120 else line[:117] + "..."
        raise ParseError(f"not Prometheus text format ({exc or 'invalid line'}): {shown!r}",
                         reader.number or None) from None


class _Reader:
    """The parser's state between blocks: the family being read (as ``prometheus_client`` groups them),
    the label caches and the per-GPU / per-device working records."""

    def __init__(self) -> None:
        self.pasted = PastedLines(())
        self.number = 0
        self.carry = ""
        self.scrape = Scrape()
        self.gpus: dict[str, dict[str, list]] = {}
        self.efa: dict[str, dict[str, list]] = {}
        self.neuron: dict[str, dict[str, float]] = {}
        self.dcgm_labels: dict[str, object] = {}
        self.efa_labels = _DeviceLabels()
        self.valid_labels: dict[str, bool] = {}
        self.samples = 0
        self.odd_xids: list = [0, None, None]  # XID values that are not codes: how many, the first's record and value
        # prometheus_client's grouping: the current family, its type, the sample names it takes
        self.name = ""
        self.typ = "untyped"
        self.allowed: tuple[str, ...] = ()
        self.has_samples = False
        self.singles = 0  # samples read as families of their own (no HELP/TYPE for their name)
        self.prefix = "\x00"  # lines of the family being read start with this: the fast path
        self.kind, self.slot, self.cache, self.single = SKIP, -1, self.valid_labels, False

    # --- input -------------------------------------------------------------------------------
    def feed_stream(self, stream) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")()
        while block := stream.read(BLOCK):
            if isinstance(block, str):  # a file opened in text mode
                self.feed_text(block)
                continue
            try:
                text = decoder.decode(block)
            except UnicodeDecodeError as exc:
                self._bad_utf8(decoder, exc)
            self.feed_text(text)
        try:
            self.feed_text(decoder.decode(b"", final=True))
        except UnicodeDecodeError as exc:
            self.feed_text("")
            raise ParseError(f"input is not UTF-8 text ({exc.reason})", self.number + 1) from None

    def _bad_utf8(self, decoder, exc: UnicodeDecodeError) -> None:
        """Read the lines before the bad byte, so the error names its line."""
        good = exc.object[:max(exc.start, 0)]  # the decoder's pending bytes, then this block
        cut = good.rfind(b"\n")
        decoder.reset()
        if cut >= 0:
            self.feed_text(good[:cut + 1].decode("utf-8", errors="replace"))
        raise ParseError(f"input is not UTF-8 text ({exc.reason})", self.number + 1)

    def feed_lines(self, source: Iterable) -> None:
        """An iterable of lines (an open file, a list): each item is one line."""
        batch: list[str] = []
        for raw in source:
            if isinstance(raw, (bytes, bytearray)):
                try:
                    raw = bytes(raw).decode("utf-8")
                except UnicodeDecodeError as exc:
                    self._lines(batch)
                    raise ParseError(f"input is not UTF-8 text (byte {exc.start})", self.number + 1) from None
            if "\x00" in raw:
                self._lines(batch)
                self.number += 1
                self.pasted.nonblank += 1
                raise ParseError("input is binary (contains NUL bytes)", self.number)
            batch.append(raw[:-1] if raw.endswith("\n") else raw)
            if len(batch) >= 10_000:
                self._lines(batch)
                batch = []
        self._lines(batch)

    def feed_text(self, text: str) -> None:
        if not text:
            return
        if "\x00" in text:
            self._binary(text)
        lines = (self.carry + text).split("\n")
        self.carry = lines.pop()
        self._lines(lines)

    def _binary(self, text: str) -> None:
        before, _, _ = text.partition("\x00")
        lines = (self.carry + before).split("\n")
        self.carry = lines.pop()
        self._lines(lines)
        self.number += 1
        self.pasted.nonblank += 1
        raise ParseError("input is binary (contains NUL bytes)", self.number)

    def finish(self) -> Scrape:
        if self.carry:
            self._lines([self.carry])
            self.carry = ""
        self._close_family()
        return self._scrape()

    # --- the loop ------------------------------------------------------------------------------
    def _fast(self) -> tuple:
        return self.prefix, len(self.prefix), self.kind, self.slot, self.cache, self.single

    def _lines(self, lines: list[str]) -> None:
        """The hot loop: a line of the family being read costs a prefix test, a look-up and a number.
        Lines between two that take the slow way are all samples of the current family, so they are
        counted by their positions, not one by one."""
        blank = DCGM_BLANK_THRESHOLD
        base, last = self.number, -1
        prefix, plen, kind, slot, cache, single = self._fast()
        for i, line in enumerate(lines):
            if line.startswith(prefix):
                close = line.find("}", plen)
                entry = cache.get(line[plen:close])
                if entry is None and close > 0:
                    entry = self._learn(line[plen:close])
                tail = line[close + 1:]
                if entry is not None and close > 0 and "_" not in tail:
                    try:
                        if slot == -1:
                            float(tail)
                            continue
                        try:
                            value = int(tail)
                        except ValueError:
                            value = float(tail)
                    except ValueError:
                        pass  # a timestamp, an exemplar, or a broken line: the slow path says which
                    else:
                        if entry is _NO_SERIES:
                            continue
                        if kind == DCGM:
                            if slot < 0 or not value < blank or (slot == XID and value and odd_xid(value)):
                                if slot == -2 or slot == XID:
                                    self._fold_dcgm(entry, slot, value)
                                continue
                            rec = entry[0]
                            if rec[UUID] is None:
                                rec[UUID] = entry[1]
                            old = rec[slot]
                            if old is None or value > old:
                                rec[slot] = value
                            if slot == XID and value:
                                rec[XID_MSG], rec[POD], rec[NAMESPACE] = entry[2], entry[3], entry[4]
                        elif value >= 0:  # EFA: NaN or nonsense is not a count
                            old = entry[slot]
                            entry[slot] = value if old is None else old + value
                        continue
            self._count_fast(i - last - 1, single)
            last = i
            self.number = base + i + 1
            self._line(line)
            prefix, plen, kind, slot, cache, single = self._fast()
        self._count_fast(len(lines) - last - 1, single)
        self.number = base + len(lines)

    def _count_fast(self, count: int, single: bool) -> None:
        self.samples += count
        if single:
            self.singles += count

    def _learn(self, key: str):
        """A label text the fast path has not met: parse it once (plain labels only) and keep what it says."""
        labels = _plain_labels(key)
        if labels is None:
            return None
        kind = self.kind
        entry = self._dcgm_entry(labels) if kind == DCGM else self._efa_entry(labels) if kind == EFA else True
        if kind == SKIP and len(self.cache) > 50_000:
            self.cache.clear()
        self.cache[key] = entry
        return entry

    def _line(self, raw: str) -> None:
        """Any line the fast path did not take, as ``PastedLines`` then ``prometheus_client`` read it."""
        pasted = self.pasted
        pasted.number = self.number
        pasted.last = raw
        if raw.startswith(_HOT):
            pasted.nonblank += 1
            pasted.kept += 1
            line = raw.strip()
        else:
            line = raw.strip()
            if not line:
                return
            pasted.nonblank += 1
            line = pasted._clean(line)
            if line is None:
                return
            pasted.kept += 1
            line = line.strip()
        if not line:
            return
        if line[0] == "#":
            self._comment(line)
        else:
            self._sample(line)

    # --- families ------------------------------------------------------------------------------
    def _comment(self, line: str) -> None:
        parts = line.split(None, 3) if line.isascii() and not _ODD_SPACE.search(line) else _split_quoted(line)
        if len(parts) < 2:
            return
        candidate = ""
        if len(parts) > 2:
            if parts[1] != "TYPE" and parts[1] != "HELP":
                return
            candidate, quoted = _unquote(parts[2])
            if not quoted and not _METRIC_NAME.fullmatch(candidate):
                raise ValueError("invalid metric name in a HELP or TYPE line")
        if parts[1] == "HELP":
            if candidate != self.name:
                self._close_family()
                self._open_family(candidate, "untyped", (candidate,))
        elif parts[1] == "TYPE":
            if len(parts) < 4:
                raise ValueError("a TYPE line without a type")
            if candidate != self.name:
                self._close_family()
                self._open_family(candidate, "untyped", ())
            self.typ = typ = parts[3]
            self.allowed = tuple(self.name + s for s in _SUFFIXES.get(typ, ("",)))
            self._route_fast(None)

    def _open_family(self, name: str, typ: str, allowed: tuple[str, ...]) -> None:
        self.name, self.typ, self.allowed, self.has_samples = name, typ, allowed, False
        self._route_fast(None)

    def _close_family(self) -> None:
        """What ``prometheus_client`` checks when it yields a family (its name and type), and what it counts."""
        if self.name == "":
            return
        typ = "unknown" if self.typ == "untyped" else self.typ
        if typ not in _TYPES:
            raise ValueError(f"invalid metric type {self.typ!r}")
        if self.typ == "counter" and self.name == "_total":
            raise ValueError("metric name cannot be empty")
        self.scrape.families += 1
        if self.has_samples:
            self._seen(self._family_route_name())

    def _family_route_name(self) -> str:
        name = self.name
        if self.typ == "counter" and name.endswith("_total"):
            name = name[:-6]
        return name.removesuffix("_total")

    def _seen(self, name: str) -> None:
        if name.startswith(("DCGM_", EFA_PREFIX)):
            self.scrape.families_seen.add(name)

    def _route_fast(self, sample_name: str | None) -> None:
        """Point the fast path at the lines of ``sample_name`` (in the current family, or a family of its own)."""
        if sample_name is None:
            self.prefix, self.kind, self.slot, self.cache, self.single = "\x00", SKIP, -1, self.valid_labels, False
            return
        single = sample_name not in self.allowed
        route = sample_name.removesuffix("_total") if single else self._family_route_name()
        kind, slot = _route(route)
        hot = sample_name.startswith(("DCGM_", "node_"))  # other names go through PastedLines' cleaning
        self.prefix = sample_name + "{" if hot and kind != NEURON else "\x00"
        self.kind, self.slot, self.single = kind, slot, single
        self.cache = self.dcgm_labels if kind == DCGM else self.efa_labels if kind == EFA else self.valid_labels

    def _sample(self, line: str) -> None:
        name, labels, value, key = _parse_sample(line)
        self.samples += 1
        if name in self.allowed:
            self.has_samples = True
            route = self._family_route_name()
        else:
            self._close_family()
            self.name, self.typ, self.allowed, self.has_samples = "", "untyped", (), False
            if not name:
                raise ValueError("metric name cannot be empty")
            self.scrape.families += 1
            route = name.removesuffix("_total")
            self._seen(route)
        kind, slot = _route(route)
        if key is not None and line.startswith(name + "{"):
            self._route_fast(name)
        else:
            self._route_fast(None)
        if kind == DCGM:
            entry = self.dcgm_labels.get(key) if key is not None else None
            if entry is None:
                entry = self._dcgm_entry(labels)
                if key is not None:
                    self.dcgm_labels[key] = entry
            self._fold_dcgm(entry, slot, value)
        elif kind == EFA:
            entry = self.efa_labels.get(key) if key is not None else None
            if entry is None:
                entry = self._efa_entry(labels)
                if key is not None:
                    self.efa_labels[key] = entry
            if entry is not _NO_SERIES and slot >= 0 and value >= 0:
                old = entry[slot]
                entry[slot] = value if old is None else old + value
        elif kind == NEURON:
            neuron_sample(labels, value, self.neuron)
        elif key is not None:
            if len(self.valid_labels) > 50_000:
                self.valid_labels.clear()
            self.valid_labels[key] = True

    def _dcgm_entry(self, labels: dict[str, str]):
        gpu = labels.get("gpu")
        if gpu is None:
            return _NO_SERIES
        host = labels.get("Hostname") or labels.get("hostname") or host_of(labels)
        node = self.gpus.get(host)
        if node is None:
            node = self.gpus[host] = {}
            self.scrape.models[host] = labels.get("modelName", "")
        rec = node.get(gpu)
        if rec is None:
            rec = node[sys.intern(gpu)] = [None] * _GPU_SLOTS
        code = labels.get("xid")
        return (rec, labels.get("UUID"), labels.get("err_msg"), labels.get("pod"), labels.get("namespace"),
                int(code) if code and code.isdigit() else None)

    def _efa_entry(self, labels: dict[str, str]):
        device = labels.get("device")
        if device is None:
            return _NO_SERIES
        host = labels.get("hostname") or labels.get("Hostname") or host_of(labels)
        node = self.efa.get(host)
        if node is None:
            node = self.efa[host] = {}
        rec = node.get(device)
        if rec is None:  # device names repeat on every host: one string each
            rec = node[sys.intern(device)] = [None] * EFA_RECORD_LENGTH
        return rec

    def _fold_dcgm(self, entry, slot: int, value: float) -> None:
        if entry is _NO_SERIES or slot == -1 or not value < DCGM_BLANK_THRESHOLD:
            return
        rec = entry[0]
        if slot == XID and value and odd_xid(value):
            odd = self.odd_xids
            odd[0] += 1
            if odd[1] is None:
                odd[1], odd[2] = rec, value
            return
        if rec[UUID] is None:
            rec[UUID] = entry[1]
        if slot == -2:
            if value > 0 and entry[5] is not None and not rec[XID]:
                rec[XID] = entry[5]
            return
        old = rec[slot]
        if old is None or value > old:
            rec[slot] = value
        if slot == XID and value:
            rec[XID_MSG], rec[POD], rec[NAMESPACE] = entry[2], entry[3], entry[4]

    def _scrape(self) -> Scrape:
        # The label caches go before the readings are built: they are the reader's largest part.
        self.dcgm_labels = self.efa_labels = self.valid_labels = self.cache = None
        scrape = self.scrape
        scrape.samples = self.samples
        scrape.families += self.singles
        if not self.gpus and not self.efa:
            raise ParseError("no dcgm-exporter (DCGM_FI_*) or EFA exporter (node_amazonefa_*) series found")
        xid_notes = self._odd_xid_notes()
        scrape.gpus = {}
        while self.gpus:
            host, node = self.gpus.popitem()
            scrape.gpus[host] = {_gpu_key(g): _gpu_reading(host, g, rec) for g, rec in node.items()}
        scrape.efa = {}
        while self.efa:  # each host's working lists are let go as its readings are made
            host, node = self.efa.popitem()
            scrape.efa[host] = {dev: EfaReading(host, dev, *rec) for dev, rec in node.items()}
        scrape.neuroncores = self.neuron
        scrape.notes = self.pasted.notes + xid_notes
        scrape.excerpt = self.pasted.elided
        return scrape

    def _odd_xid_notes(self) -> list[str]:
        """The note for XID values that are not codes (the GPU of the first found by its working record)."""
        count, rec, value = self.odd_xids
        if not count:
            return []
        host, gpu = next((h, g) for h, node in self.gpus.items() for g, r in node.items() if r is rec)
        return [odd_xid_note(count, host, gpu, value)]


class _DeviceLabels:
    """The EFA label cache, keyed by the label text as the fast path slices it, held in two levels.

    A 2,000-node scrape has 64,000 EFA label texts (``device="rdmap79s0",instance="ip-…:9109",job=…``), the
    same in each of its 13 EFA families: kept whole they are 9 MB of keys, the reader's largest part. When
    the text starts with the device (as Prometheus writes labels, sorted), it is split after the device's
    value: the rest (one per host) finds the host's devices, the device part (one string shared by every
    host) the device. The split is a function of the text, so the same text always finds the same entry;
    a text in another order is kept whole."""

    __slots__ = ("flat", "hosts")

    def __init__(self) -> None:
        self.flat: dict[str, object] = {}
        self.hosts: dict[str, dict[str, object]] = {}

    def get(self, key: str):
        if key.startswith('device="'):
            cut = key.find('",')
            if cut > 0:
                devices = self.hosts.get(key[cut:])
                return None if devices is None else devices.get(key[:cut])
        return self.flat.get(key)

    def __setitem__(self, key: str, entry) -> None:
        if key.startswith('device="'):
            cut = key.find('",')
            if cut > 0:
                self.hosts.setdefault(key[cut:], {})[sys.intern(key[:cut])] = entry
                return
        self.flat[key] = entry


def _route(name: str) -> tuple[int, int]:
    """Where a family's samples go: (kind, slot); slot -1 only marks which GPUs or devices exist."""
    if name.startswith("DCGM_"):
        slot = DCGM_FIELDS.get(name)
        if slot is None:
            slot = UTILIZATION_FIELDS.get(name, -2 if name in XID_COUNT_FAMILIES else -1)
        return DCGM, slot
    if name.startswith(EFA_PREFIX):
        return EFA, _EFA_SLOT.get(name, -1)
    if name == NEURONCORE_UTILIZATION:
        return NEURON, 0
    return SKIP, -1



# --- one line, as prometheus_client reads it ---------------------------------------------------------

def _parse_sample(text: str) -> tuple[str, dict[str, str], float, str | None]:
    """(name, labels, value, cache key or None) of a stripped sample line; ``ValueError`` where
    ``prometheus_client`` raises one. The key is the label text when the fast path can take the lines
    that carry it (plain labels, escapes allowed, no quoted brace)."""
    brace = text.find("{")
    if brace > 0:
        close = text.find("}", brace)
        key = text[brace + 1:close]
        if close > 0 and _METRIC_NAME.fullmatch(text, 0, brace):
            labels = _plain_labels(key)
            if labels is not None:
                return text[:brace], labels, _value_and_timestamp(text[close + 1:]), key
    return (*_slow_sample(text), None)


def _plain_labels(key: str) -> dict[str, str] | None:
    """The labels of ``name="value",…`` (escapes allowed), or None for anything the slow path must read:
    spaces, quoted names, a duplicate or reserved (``__…``) name, a brace inside a value."""
    if not _LABELS.fullmatch(key):
        return None
    if "\\" in key:
        pairs = _PAIR.findall(key)
        labels = {k: (_ESCAPE.sub(_unescape, v) if "\\" in v else v) for k, v in pairs}
        count = len(pairs)
    elif key:
        # No backslash: no quote inside a value, so '",' only ends a value.
        parts = key.removesuffix(",").removesuffix('"').split('",')
        labels = dict(part.split('="', 1) for part in parts)
        count = len(parts)
    else:
        return {}
    if len(labels) != count or key.startswith("__") or ",__" in key:
        return None
    return labels


def _unescape(match: re.Match) -> str:
    return _ESCAPES[match.group(0)]


def _slow_sample(text: str) -> tuple[str, dict[str, str], float]:
    """``prometheus_client``'s line grammar, quirks included (only unusual lines come here)."""
    label_start = _next_unquoted(text, "{")
    if label_start == -1 or " # " in text[:label_start]:
        name_end = _next_unquoted(text, " \t")
        name = text[:name_end].strip()
        if not _METRIC_NAME.fullmatch(name):
            raise ValueError("invalid metric name")
        return name, {}, _value_and_timestamp(text[name_end + 1:])
    name = text[:label_start].strip()
    label_end = _next_unquoted(text[label_start:], "}") + label_start
    labels = parse_labels(text[label_start + 1:label_end], False)
    if not name:
        if "__name__" not in labels:
            raise ValueError("no metric name")
        name = labels.pop("__name__")
    elif "__name__" in labels:
        raise ValueError("metric name specified more than once")
    return name, labels, _value_and_timestamp(text[label_end + 1:])


def _value_and_timestamp(s: str) -> float:
    """The value (int when it reads as one, as prometheus_client gives it); a timestamp is checked, not kept.
    Only the first and the last token count, so an exemplar between them is accepted, as the library does."""
    s = s.lstrip()
    separator = " " if " " in s else "\t"
    values = [v.strip() for v in s.split(separator) if v.strip()]
    if not values:
        return float(s)
    value = _number(values[0])
    if len(values) > 1:
        _number(values[-1])
    return value


def _number(value: str) -> float:
    if value != value.strip() or "_" in value:
        raise ValueError(f"invalid value {value[:40]!r}")
    try:
        return int(value)
    except ValueError:
        return float(value)


def _escaped(text: str, pos: int) -> bool:
    count = 0
    while pos > count and text[pos - 1 - count] == "\\":
        count += 1
    return count % 2 == 1


def _next_unquoted(text: str, chars: str, start: int = 0) -> int:
    in_quotes = False
    for i in range(start, len(text)):
        c = text[i]
        if c == '"' and not _escaped(text, i):
            in_quotes = not in_quotes
        if not in_quotes and c in chars:
            return i
    return -1


def _split_quoted(text: str, maxsplit: int = 3) -> list[str]:
    """Whitespace splitting that keeps quoted parts whole (HELP/TYPE lines with quotes or odd spaces)."""
    tokens = [""]
    x = 0
    while x < len(text):
        pos = _next_unquoted(text, string.whitespace, x)
        if pos == -1:
            tokens[-1] = text[x:]
            break
        if pos == x:
            x += 1
            continue
        if len(tokens) > maxsplit:
            tokens[-1] = text[x:]
            break
        tokens[-1] = text[x:pos]
        x = pos + 1
        tokens.append("")
    return tokens


def _unquote(text: str) -> tuple[str, bool]:
    if not text:
        return text, False
    quoted = False
    text = text.strip()
    if text[0] == '"':
        if len(text) == 1 or text[-1] != '"':
            raise ValueError("missing close quote")
        text, quoted = text[1:-1], True
    if "\\" in text:
        text = _ESCAPE.sub(_unescape, text)
    return text, quoted


# --- the oracle ----------------------------------------------------------------------------------

def oracle_parse(text: str) -> Scrape:
    """The same reading through ``prometheus_client``'s parser (every family, every sample object), with
    the same cleaning of pasted text: what the tests hold ``read`` to. Slow by design."""
    lines = PastedLines(io.StringIO(_as_text(text)))
    try:
        scrape = prometheus.parse_families(text_fd_to_metric_families(lines))
    except ParseError as exc:
        if lines.nonblank == 0:
            raise ParseError("input is empty") from None
        if not exc.line and lines.notes and not lines.kept:
            raise ParseError(f"{exc}; the input held only {', '.join(lines.notes)}") from None
        raise
    except _PARSE_ERRORS as exc:
        raise prometheus._error_at(lines, exc) from exc
    scrape.notes = lines.notes + scrape.notes
    scrape.excerpt = lines.elided
    return scrape


def parse(text: str | bytes | Iterable) -> Scrape:
    """Parse one exposition (a string, bytes, a binary file, or an iterable of lines such as an open file)
    into a ``Scrape``; raise ``ParseError`` for text we cannot use. Every caller reads through this one entry."""
    return read(text)


def parse_stream(stream) -> Scrape:
    """Parse an exposition read as it streams (a binary file over a gzip body, read in blocks), never
    holding the whole text; the same reader as :func:`parse`."""
    return read(stream)
