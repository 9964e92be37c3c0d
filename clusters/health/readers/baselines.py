"""Counter baselines kept between reports, packed as one string per host.

The summary judges counters (throttling time, EFA errors and drops) by how much they grew since the
previous report, so each report leaves every counter's value for the next one. A 2,000-node p5 cluster
has 64,000 EFA devices of six counters: kept as a list per device under a dict per host, that is about
9 MB of Python objects the health worker holds while it judges a push, again while it reads the previous
baselines, and once more as the JSON being written. Packed as ``device=v1,v2,…;device=…`` (one string per
host) it is a quarter of that, and only the host being judged is unpacked.

A key that could not be read back (one holding ``;``, ``=`` or ``,``) keeps the older form, a dict of
lists, which ``unpack`` reads as well: states stored before the packing are read as they are.
"""
from __future__ import annotations

_ITEM, _KEY, _VALUE = ";", "=", ","


def pack(values: dict[str, list[float]]) -> str | dict[str, list[float]]:
    """One host's baselines (key → counter values) as one string; the dict itself for an odd key."""
    if any(_ITEM in key or _KEY in key or _VALUE in key for key in values):
        return dict(values)
    return _ITEM.join(f"{key}{_KEY}{_VALUE.join(map(_number_text, counts))}" for key, counts in values.items())


def unpack(stored) -> dict[str, list[float]]:
    """One host's baselines as ``pack`` left them (or in the older dict form); nonsense reads as none."""
    if isinstance(stored, dict):
        return stored
    if not isinstance(stored, str) or not stored:
        return {}
    values: dict[str, list[float]] = {}
    for item in stored.split(_ITEM):
        key, _, counts = item.partition(_KEY)
        try:
            values[key] = [_number(text) for text in counts.split(_VALUE)]
        except ValueError:
            continue  # not a baseline: the counter's next value is taken whole, as for a new device
    return values


def _number_text(value: float) -> str:
    return repr(value) if isinstance(value, float) else str(value)  # repr: the exact float back


def _number(text: str) -> float:
    try:
        return int(text)
    except ValueError:
        return float(text)
