"""The result table of nccl-tests, one row per message size read by the column header's names, and the result
every collective reader (nccl-tests, nccom-test) returns.

Kept apart from :mod:`clusters.health.readers.nccl` (which splits the output into runs and judges them) because the
table's shape alone (columns, ``#wrong`` or ``error``, ``N/A``, per-iteration blocks, timestamps) is what
every release changed; nccom-test's reader builds the same rows.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, replace

TOOL = "nccl-tests"

# Bytes per element of the type names nccl-tests prints (src/common.cu test_typenames).
ELEMENT_BYTES = {
    "int8": 1, "uint8": 1, "char": 1, "int32": 4, "uint32": 4, "int": 4, "int64": 8, "uint64": 8,
    "half": 2, "float16": 2, "bfloat16": 2, "float": 4, "float32": 4, "double": 8, "float64": 8,
    "f8e4m3": 1, "f8e5m2": 1, "fp8_e4m3": 1, "fp8_e5m2": 1,
}


_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_CLOCK = re.compile(r"^\d{2}:\d{2}:\d{2}$")


@dataclass
class NcclRow:
    """One message size: out-of-place then in-place figures.

    ``*_wrong`` is the ``#wrong`` count (None for ``N/A`` or when the release printed an
    ``error`` column instead, whose value is then in ``*_error``). ``ip_*`` is None for tools
    that measure one placement only (nccom-test).
    """

    size: int
    count: int
    type: str | None
    redop: str | None
    root: int | None
    oop_time_us: float
    oop_algbw: float
    oop_busbw: float
    oop_wrong: int | None
    ip_time_us: float | None = None
    ip_algbw: float | None = None
    ip_busbw: float | None = None
    ip_wrong: int | None = None
    oop_error: float | None = None
    ip_error: float | None = None
    per_iteration: list[float] | None = None  # -I 1: oop i_min i_max i_p99 i_cv%, then in-place
    timestamp: str | None = None               # -S 1

    @property
    def busbw(self) -> float:
        """The better of the two placements, which is what people quote."""
        return self.oop_busbw if self.ip_busbw is None else max(self.oop_busbw, self.ip_busbw)

    @property
    def algbw(self) -> float:
        return self.oop_algbw if self.ip_algbw is None else max(self.oop_algbw, self.ip_algbw)


@dataclass
class NcclResult:
    """A parsed run plus the verdict against the expected bandwidth."""

    collective: str
    rows: list[NcclRow]
    ranks: int | None = None
    nodes: int | None = None
    hosts: list[str] = field(default_factory=list)
    gpus_per_node: int | None = None
    gpu_model: str | None = None
    hardware: str | None = None
    n_threads: int | None = None
    n_gpus: int | None = None
    min_bytes: int | None = None
    max_bytes: int | None = None
    step: str | None = None
    peak_busbw: float = 0.0
    avg_busbw: float = 0.0
    large_message_busbw: float | None = None  # busbw of the smallest message >= 1 GiB
    plateau_busbw: float | None = None        # best busbw among messages >= 1 GiB
    out_of_bounds: int | None = None
    out_of_bounds_ok: bool | None = None
    wrong_total: int = 0
    checked: bool = True  # False: run with -c 0, so the error column is N/A and wrong_total says nothing
    complete: bool = False
    excerpt: bool = False
    transport: str | None = None
    nccl_version: str | None = None
    ofi_version: str | None = None
    nccl_tests_version: str | None = None
    tool: str = TOOL
    collective_source: str = "log"  # given | log | command | inferred
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    instance_type: str | None = None
    verdict: str | None = None
    diagnosis: str = ""
    expected_busbw: float | None = None
    reference_source: str | None = None
    reference_for: str | None = None  # the run the expected figure was published for ("2 × p5.48xlarge")
    runs: list[NcclResult] = field(default_factory=list)
    primary_run: int = 0

    def to_dict(self) -> dict:
        """JSON-safe dict; ``rows`` is a list of dicts, ``runs`` every run (the primary one included)."""
        data = asdict(replace(self, runs=[]))
        data["runs"] = [asdict(replace(run, runs=[])) for run in self.runs]
        return data



def columns_of(line: str) -> list[str] | None:
    """The column names of a result table header line (``#  size  count  type …  busbw #wrong …``)."""
    tokens = line.lstrip("#").split()
    if len(tokens) < 6 or tokens[0] != "size" or "busbw" not in tokens:
        return None
    return tokens


def _number(token: str) -> float:
    return float(token.rstrip("*"))


def _is_number(token: str) -> bool:
    try:
        _number(token)
    except ValueError:
        return False
    return True


def row_of(tokens: list[str], columns: list[str] | None) -> NcclRow | None:
    """A table row, or None for any other line.

    The column header names the leading columns and says whether per-iteration columns follow
    each block; without it, the last eight tokens are the two result blocks.
    """
    if len(tokens) < 7 or not tokens[0].isdigit() or not tokens[1].isdigit():
        return None
    timestamp = None
    if len(tokens) > 2 and _TIMESTAMP.match(tokens[-2]) and _CLOCK.match(tokens[-1]):
        timestamp, tokens = f"{tokens[-2]} {tokens[-1]}", tokens[:-2]
    n = len(tokens)
    block = 4
    if columns is not None:
        lead_names = columns[:next((i for i, c in enumerate(columns) if c in ("time", "cputime")), len(columns))]
        if "i_min" in columns:
            block = 8
        lead = len(lead_names)
    else:
        lead_names = None
        if 19 <= n <= 21:
            block, lead = 8, n - 16
        else:
            lead = n - 8
    if not 2 <= lead <= 5 or n != lead + 2 * block:
        return None
    head, oop, ip = tokens[:lead], tokens[lead:lead + block], tokens[lead + block:]
    names = lead_names or _lead_names(head)
    if names is None:
        return None
    values = dict(zip(names, head, strict=False))
    counts = None if columns is None else "error" not in columns
    try:
        root = int(values["root"]) if "root" in values else None
        oop_wrong, oop_error = _wrong(oop[3], counts)
        ip_wrong, ip_error = _wrong(ip[3], counts)
        return NcclRow(
            size=int(values["size"]), count=int(values["count"]), type=values.get("type"),
            redop=values.get("redop"), root=root,
            oop_time_us=_number(oop[0]), oop_algbw=_number(oop[1]), oop_busbw=_number(oop[2]), oop_wrong=oop_wrong,
            ip_time_us=_number(ip[0]), ip_algbw=_number(ip[1]), ip_busbw=_number(ip[2]), ip_wrong=ip_wrong,
            oop_error=oop_error, ip_error=ip_error,
            per_iteration=[_number(t) for t in oop[4:] + ip[4:]] if block == 8 else None, timestamp=timestamp,
        )
    except (ValueError, KeyError):
        return None


def _lead_names(head: list[str]) -> list[str] | None:
    """Column names of the leading tokens when there is no column header to say."""
    if len(head) == 2:
        return ["size", "count"]
    if _is_number(head[2]):
        return None
    if len(head) == 3:
        return ["size", "count", "type"]
    if len(head) == 4:
        return ["size", "count", "type", "root" if _is_number(head[3]) else "redop"]
    return ["size", "count", "type", "redop", "root"]


def _wrong(token: str, counts: bool | None) -> tuple[int | None, float | None]:
    """``#wrong`` as a count, or an old release's ``error`` column (a maximum deviation) as a float.

    ``counts`` says which column the header named (None: no header, told by the token's form).
    """
    if token.upper() == "N/A":
        return None, None
    value = _number(token)
    if counts or (counts is None and token.isdigit()):
        return int(value), None
    return None, value
