"""The streaming reader against its oracle: ``prometheus_client``'s parser (every family, every sample
object) folded by ``prometheus.parse_families``. Over every published scrape the tests keep and over
generated ones (random label orders, escapes, comments, ``_total`` suffixes, timestamps, NaN/+Inf,
exemplars, missing HELP/TYPE, and broken lines), both must give the same scrape and the same summary,
or both refuse at the same line."""
from __future__ import annotations

import gzip
import io
import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clusters.health.readers import exposition as reader
from clusters.health.readers.prometheus import ParseError
from clusters.health.readers.summary import summarize
from tests import samples

ROOT = Path(__file__).resolve().parents[1]
SCRAPES = sorted([*ROOT.glob("data/*.prom"), *samples.glob("dcgm_*.txt"), *samples.glob("efa_*.txt")])


def outcome(parse, source) -> tuple:
    """What a reader makes of ``source``: the scrape and its summary as JSON (ints stay ints), or the
    refusal's line."""
    try:
        scrape = parse(source)
    except ParseError as exc:
        return ("refused", exc.line)
    summary = summarize(scrape, "p5.48xlarge").to_dict(include_state=True)
    return ("read", json.dumps(scrape.to_dict(), sort_keys=True), json.dumps(summary, sort_keys=True))


def test_there_are_published_scrapes_to_compare():
    samples.folder("fixtures")  # skips, saying why, where the published outputs are absent
    assert len(SCRAPES) >= 15


@pytest.mark.parametrize("path", SCRAPES, ids=lambda p: p.name)
def test_every_published_scrape_reads_as_the_oracle_reads_it(path, monkeypatch):
    text = path.read_text()
    expected = outcome(reader.oracle_parse, text)
    assert outcome(reader.read, text) == expected
    # as the worker reads a push: a gzip stream in blocks, lines cut across blocks
    monkeypatch.setattr(reader, "BLOCK", 97)
    assert outcome(reader.read, gzip.GzipFile(fileobj=io.BytesIO(gzip.compress(text.encode())))) == expected


def test_broken_published_scrape_is_refused_at_the_same_line():
    text = (ROOT / "data/dcgm_p5_broken_line.prom").read_text()
    assert outcome(reader.read, text)[0] == "refused" == outcome(reader.oracle_parse, text)[0]


def test_utilization_is_kept_per_gpu_and_the_summary_does_not_change():
    text = (ROOT / "data/dcgm_p5_healthy.prom").read_text()
    line = next(x for x in text.splitlines() if x.startswith("DCGM_FI_PROF_GR_ENGINE_ACTIVE{") and 'gpu="2"' in x)
    host = line.split('Hostname="')[1].split('"')[0]
    neuron = 'neuroncore_utilization_ratio{neuroncore="3",instance_id="i-0abc"} 0.75\n'
    scrape = reader.read(text + neuron)
    gpu = scrape.gpus[host][2]
    assert gpu.gr_engine_active == float(line.rsplit(" ", 1)[1]) and gpu.gpu_util is not None
    assert scrape.neuroncores == {"i-0abc": {"3": 0.75}}
    without = "".join(x for x in text.splitlines(keepends=True)
                      if "DCGM_FI_PROF_GR_ENGINE_ACTIVE" not in x and "DCGM_FI_DEV_GPU_UTIL" not in x)
    measured, unmeasured = (summarize(s, "p5.48xlarge").to_dict(include_state=True)
                            for s in (scrape, reader.read(without)))
    # Utilization only adds each node's busy share (what capacity accounting reads); every verdict stays the same.
    assert measured["nodes"][0]["busy"] is not None and unmeasured["nodes"][0]["busy"] is None
    for summary in (measured, unmeasured):
        for node in summary["nodes"]:
            node.pop("busy"), node.pop("busy_readings", None)
    assert measured == unmeasured
    assert outcome(reader.read, text + neuron) == outcome(reader.oracle_parse, text + neuron)


# --- generated scrapes --------------------------------------------------------------------------

DCGM = ["DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "DCGM_FI_DEV_ROW_REMAP_FAILURE",
        "DCGM_FI_DEV_THERMAL_VIOLATION", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "DCGM_FI_DEV_GPU_TEMP",
        "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_EXP_XID_ERRORS_COUNT", "DCGM_FI_DEV_SM_CLOCK"]
EFA = ["node_amazonefa_rx_drops", "node_amazonefa_rdma_read_wr_err", "node_amazonefa_tx_bytes"]
VALUES = ["0", "1", "3", "79", "2.5", "NaN", "+Inf", "-Inf", "1e3", "9223372036854775794", "-1", "0.000"]
ODD_VALUES = ['va\\"l}ue', "back\\\\slash", "new\\nline", "comma,}", "sp ace", "tab\tx", "ünï", "#", "x # y"]
BREAKS = ["cut", "garbage", "underscore", "dup_label", "open_quote", "bad_type", "no_value", "nul", "reserved",
          "double_name", "type_short"]


def _labels(rnd: random.Random, pairs: list[tuple[str, str]]) -> str:
    pairs = list(pairs)
    rnd.shuffle(pairs)  # exporters do not agree on an order
    sep = rnd.choice([",", ",", ", "]) if rnd.random() < 0.1 else ","
    text = sep.join(f'{k}="{v}"' for k, v in pairs)
    return text + ("," if rnd.random() < 0.05 else "")


def _sample(rnd: random.Random, name: str, labels: str) -> str:
    value = rnd.choice(VALUES)
    line = f"{name}{{{labels}}} {value}" if labels or rnd.random() < 0.5 else f"{name} {value}"
    roll = rnd.random()
    if roll < 0.08:
        line += f" {rnd.randint(1, 1_700_000_000_000)}"  # a timestamp
    elif roll < 0.12:
        line += ' # {trace_id="abc"} 1.5 1700000000.001'  # an exemplar
    elif roll < 0.14:
        line += "\t"
    return line


def generated(rnd: random.Random) -> str:
    hosts = [f"ip-10-0-{i}-{rnd.randint(1, 9)}" for i in range(rnd.randint(1, 3))]
    out: list[str] = []
    families = rnd.sample(DCGM, rnd.randint(1, len(DCGM))) + rnd.sample(EFA, rnd.randint(0, len(EFA)))
    if rnd.random() < 0.3:
        families.insert(rnd.randrange(len(families) + 1), "go_goroutines")
    for name in families:
        counter = name.endswith(("_TOTAL", "_VIOLATION", "ROWS")) or name.startswith("node_")
        typ = "counter" if counter else rnd.choice(["gauge", "gauge", "untyped", "summary"])
        shown = name + ("_total" if counter and rnd.random() < 0.3 else "")
        if rnd.random() < 0.8:  # HELP/TYPE may be missing
            if rnd.random() < 0.7:
                out.append(f"# HELP {shown} {name.lower()} help, with \\\\ and \\n escapes.")
            out.append(f"# TYPE {shown} {typ}")
        if rnd.random() < 0.1:
            out.append(rnd.choice(["# a comment", "#", "", "   ", "# EOF comment # with hashes"]))
        for host in hosts:
            if name.startswith("node_"):
                for device in range(rnd.randint(0, 3)):
                    pairs = [("device", f"rdmap{device}s0"), ("port", "1")]
                    pairs.append(("instance", f"{host}:9109") if rnd.random() < 0.7 else ("hostname", host))
                    out.append(_sample(rnd, shown, _labels(rnd, pairs)))
            elif name == "go_goroutines":
                out.append(f"go_goroutines {rnd.randint(1, 99)}")
            else:
                for gpu in range(rnd.randint(0, 4)):
                    pairs = [("gpu", str(gpu)), ("UUID", f"GPU-{host}-{gpu}"), ("modelName", "NVIDIA H100 80GB HBM3"),
                             ("Hostname" if rnd.random() < 0.8 else "hostname", host)]
                    if name.endswith("XID_ERRORS") or name.endswith("COUNT"):
                        pairs.append(("err_msg", rnd.choice(ODD_VALUES)))
                        pairs.append(("xid", rnd.choice(["79", "48", "x"])))
                    if rnd.random() < 0.2:
                        pairs.append(("pod", rnd.choice(ODD_VALUES)))
                    if rnd.random() < 0.1:
                        pairs = [p for p in pairs if p[0] != "gpu"]
                    out.append(_sample(rnd, shown, _labels(rnd, pairs)))
    if rnd.random() < 0.35:
        _break(rnd, out)
    return "\n".join(out) + ("\n" if rnd.random() < 0.9 else "")


def _break(rnd: random.Random, out: list[str]) -> None:
    """One broken line somewhere: each kind is one prometheus_client refuses or accepts in its own way."""
    samples = [i for i, line in enumerate(out) if line and not line.startswith("#")]
    if not samples:
        return
    i = rnd.choice(samples)
    line, kind = out[i], rnd.choice(BREAKS)
    if kind == "cut":
        out[i] = line[:rnd.randint(1, max(1, len(line) - 1))]
    elif kind == "garbage":
        out.insert(i, rnd.choice(["<html>502 Bad Gateway</html>", "{}", "}{", "= 1", "DCGM_X{gpu=0} 1", "inf"]))
    elif kind == "underscore":
        out[i] = line.rsplit(" ", 1)[0] + " 1_000"
    elif kind == "dup_label" and "{" in line:
        out[i] = line.replace("{", '{gpu="9",gpu="8",', 1)
    elif kind == "open_quote" and '="' in line:
        out[i] = line.replace('="', "=", 1)
    elif kind == "bad_type":
        out.insert(i, "# TYPE DCGM_FI_DEV_GPU_TEMP bogus")
    elif kind == "no_value":
        out[i] = line.split("}")[0] + "}" if "}" in line else line.split(" ")[0]
    elif kind == "nul":
        out[i] = line + "\x00"
    elif kind == "reserved" and "{" in line:
        out[i] = line.replace("{", '{__secret="1",', 1)
    elif kind == "double_name" and "{" in line:
        out[i] = line.replace("{", '{__name__="DCGM_FI_DEV_XID_ERRORS",', 1)
    elif kind == "type_short":
        out.insert(i, "# TYPE DCGM_FI_DEV_GPU_TEMP")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.randoms(use_true_random=False))
def test_generated_scrapes_read_as_the_oracle_reads_them(rnd):
    text = generated(rnd)
    assert outcome(reader.read, text) == outcome(reader.oracle_parse, text)


@settings(max_examples=60, deadline=None)
@given(st.randoms(use_true_random=False), st.integers(min_value=1, max_value=300))
def test_generated_scrapes_read_alike_whatever_the_blocks(rnd, block):
    """The worker's stream: block boundaries fall anywhere, inside a line or a UTF-8 character."""
    text = generated(rnd)
    old, reader.BLOCK = reader.BLOCK, block
    try:
        streamed = outcome(reader.read, io.BytesIO(text.encode()))
    finally:
        reader.BLOCK = old
    assert streamed == outcome(reader.oracle_parse, text)


@pytest.mark.parametrize("line", [
    'DCGM_FI_DEV_XID_ERRORS{gpu="0",Hostname="h"} 1 2 3',  # only the first and last tokens count
    'DCGM_FI_DEV_XID_ERRORS{gpu="0",Hostname="h"}\t79',
    'DCGM_FI_DEV_XID_ERRORS{gpu="0",Hostname="h",err_msg="a}b"} 79',
    'DCGM_FI_DEV_XID_ERRORS { gpu = "0" , Hostname = "h" } 79',
    '{__name__="DCGM_FI_DEV_XID_ERRORS",gpu="0",Hostname="h"} 79',
    'DCGM_FI_DEV_XID_ERRORS{gpu="0",Hostname="h"} 79 # {trace_id="x y"} 1',
    'DCGM_FI_DEV_XID_ERRORS{gpu="0",Hostname="h"} 0x10',
    'DCGM_FI_DEV_XID_ERRORS{gpu="0",Hostname="h"} 79 1_0',
    'DCGM_FI_DEV_XID_ERRORS{gpu="0" Hostname="h"} 79',
    'DCGM_FI_DEV_XID_ERRORS{"gpu"="0",Hostname="h"} 79',
    'DCGM_FI_DEV_XID_ERRORS{gpu="0",Hostname="h"',
    'DCGM_FI_DEV_XID_ERRORS{gpu="0",Hostname="h\\"} 79',
    'DCGM FI{gpu="0",Hostname="h"} 79',
    "# TYPE DCGM_FI_DEV_XID_ERRORS_total counter",
    '# HELP "DCGM_FI_DEV_XID_ERRORS" quoted name',
    "# TYPE 9bad gauge",
])
def test_odd_lines_read_as_the_oracle_reads_them(line):
    text = f'DCGM_FI_DEV_GPU_TEMP{{gpu="1",Hostname="h"}} 40\n{line}\nDCGM_FI_DEV_GPU_TEMP{{gpu="2",Hostname="h"}} 41\n'
    assert outcome(reader.read, text) == outcome(reader.oracle_parse, text)


@pytest.mark.parametrize("block", [1, 2, 3, 7, 64, 1 << 20])
def test_a_byte_that_is_not_utf8_is_refused_at_its_line_whatever_the_blocks(block, monkeypatch):
    body = 'DCGM_FI_DEV_GPU_TEMP{gpu="0",Hostname="hé"} 40\n# HELP x ünï\nDCGM_FI_DEV_GPU_TEMP{gpu="1",Hostname="\xff"} 41\n'
    monkeypatch.setattr(reader, "BLOCK", block)
    data = body.encode().replace(b"\xc3\xbf", b"\xff")
    with pytest.raises(ParseError, match="not UTF-8") as refused:
        reader.read(io.BytesIO(data))
    assert refused.value.line == 3


@pytest.mark.parametrize("value", ["-Inf", "-inf", "-3", "79.5", "1e-3", "-1e300"])
@pytest.mark.parametrize("timestamp", ["", " 1700000000000"])  # the fast path, and the line parser
def test_an_xid_that_is_not_a_code_is_ignored_with_a_note_by_both_readers(value, timestamp):
    text = ("# TYPE DCGM_FI_DEV_XID_ERRORS gauge\n"
            f'DCGM_FI_DEV_XID_ERRORS{{gpu="0",UUID="GPU-a",Hostname="h1"}} {value}{timestamp}\n'
            f'DCGM_FI_DEV_XID_ERRORS{{gpu="1",UUID="GPU-b",Hostname="h1"}} 79{timestamp}\n'
            f'DCGM_FI_DEV_XID_ERRORS{{gpu="2",UUID="GPU-c",Hostname="h2"}} -Inf{timestamp}\n')
    expected = outcome(reader.oracle_parse, text)
    assert expected[0] == "read" and outcome(reader.read, text) == expected
    assert outcome(reader.read, io.BytesIO(text.encode())) == expected
    scrape = reader.read(text)
    assert scrape.gpus["h1"][0].xid is None and scrape.gpus["h1"][1].xid == 79 and scrape.gpus["h2"][2].xid is None
    first = f"{float(value):g}"
    assert scrape.notes == [f"2 DCGM_FI_DEV_XID_ERRORS values that are not an XID code (a whole number) were ignored; "
                            f"the first: {first} for h1 GPU 0"]
    summary = summarize(scrape, None)
    assert [f.xid for f in summary.faults if f.kind == "xid"] == [79] and scrape.notes[0] in summary.notes


@pytest.mark.parametrize("value", ["79.0", "7.9e1", "-0", "+Inf", "NaN"])
def test_whole_xids_and_dcgm_no_values_take_no_note(value):
    text = f'DCGM_FI_DEV_XID_ERRORS{{gpu="0",UUID="GPU-a",Hostname="h1"}} {value}\n'
    assert outcome(reader.read, text) == outcome(reader.oracle_parse, text)
    scrape = reader.read(text)
    assert scrape.notes == [] and scrape.gpus["h1"][0].xid == (79 if value.startswith(("7", "+7")) else
                                                                 0 if value == "-0" else None)
