"""Counter baselines packed one string per host: read back exactly, older states still read, growth still found."""
from __future__ import annotations

import math

from clusters.health.readers import baselines
from clusters.health.readers.exposition import parse
from clusters.health.readers.summary import summarize
from tests.health.factories_health import sample


def test_pack_and_unpack_give_the_values_back():
    values = {"rdmap79s0": [0, 3, 0, 0, 1.5, 123456789012], "rdmap80s0": [0.1, 0, 0, 0, 0, math.inf]}
    packed = baselines.pack(values)
    assert isinstance(packed, str) and "rdmap80s0=0.1," in packed
    assert baselines.unpack(packed) == values
    assert baselines.pack({}) == "" and baselines.unpack("") == {}


def test_a_key_that_cannot_be_packed_keeps_the_dict_form():
    values = {"odd;device=1": [1, 2]}
    assert baselines.pack(values) == values and baselines.unpack(values) == values


def test_nonsense_reads_as_no_baseline():
    assert baselines.unpack("rdmap79s0=1,x;rdmap80s0=2") == {"rdmap80s0": [2]}
    assert baselines.unpack(17) == {}


def test_the_summary_state_is_packed_and_growth_is_found_from_it():
    first = summarize(parse(sample("efa_p5_two_nodes.prom")), "p5.48xlarge")
    assert all(isinstance(v, str) for v in first.state["efa"].values())
    later = summarize(parse(sample("efa_p5_two_nodes_later.prom")), "p5.48xlarge", first.state)
    kinds = {f.kind for f in later.faults}
    assert kinds & {"efa_rdma_read_err", "efa_rx_drops", "efa_retrans_timeout"}, kinds


def test_a_state_stored_before_the_packing_is_read_alike():
    first = summarize(parse(sample("efa_p5_two_nodes.prom")), "p5.48xlarge")
    unpacked = {**first.state, "efa": {h: baselines.unpack(v) for h, v in first.state["efa"].items()},
                "gpu": {h: baselines.unpack(v) for h, v in first.state["gpu"].items()}}
    assert all(isinstance(v, dict) for v in unpacked["efa"].values())
    text = sample("efa_p5_two_nodes_later.prom")
    old = summarize(parse(text), "p5.48xlarge", unpacked)
    new = summarize(parse(text), "p5.48xlarge", first.state)
    assert old.to_dict(include_state=True) == new.to_dict(include_state=True) and old.faults
