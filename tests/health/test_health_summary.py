"""Node verdicts, faults, dashboard panels and the state carried between reports."""

import json
from pathlib import Path

import pytest

from clusters.health.readers import baselines, reason_texts
from clusters.health.readers.exposition import parse
from clusters.health.readers.summary import VERDICTS, summarize, worse
from portal.core.instance_types import UnknownInstanceType

DATA = Path(__file__).resolve().parents[1] / "data"


def read(name: str) -> str:
    return (DATA / name).read_text()


def kinds(summary):
    return [(f.hostname, f.gpu, f.device, f.kind) for f in summary.faults]


def test_healthy_node():
    summary = summarize(read("dcgm_p5_healthy.prom"), "p5.48xlarge")
    (node,) = summary.nodes
    assert (node.hostname, node.expected_gpus, node.gpus_seen, node.missing_gpus, node.verdict) == (
        "ip-10-1-45-12", 8, 8, [], "healthy")
    assert summary.faults == []
    assert summary.healthy_gpu_share == 1.0
    assert summary.panels == {"uncorrectable_remapped_rows": 0, "correctable_remapped_rows": 0, "xid_errors": 0,
                              "row_remap_failures": 0, "thermal_violations": 0, "missing_gpus": 0}


def test_xid79_and_missing_gpu_mean_reboot():
    summary = summarize(read("dcgm_p5_xid79_missing_gpu.prom"), "ml.p5.48xlarge")
    (node,) = summary.nodes
    assert (node.gpus_seen, node.missing_gpus, node.verdict) == (7, [5], "reboot")
    assert kinds(summary) == [("ip-10-1-45-13", 5, None, "missing_gpu"), ("ip-10-1-45-13", 2, None, "xid")]
    xid = summary.faults[1]
    assert (xid.xid, xid.severity, xid.action) == (79, "critical", "reboot the node; replace it if it recurs")
    assert xid.uuid.startswith("GPU-")
    assert summary.panels["missing_gpus"] == 1
    assert summary.panels["xid_errors"] == 1
    assert summary.healthy_gpu_share == 0.75  # 8 expected, one missing, one with an XID
    assert (summary.gpus_expected, summary.gpus_seen) == (8, 7)


def test_remapped_rows_and_row_remap_failure_mean_replace():
    summary = summarize(read("dcgm_p5_remapped_rows.prom"), "p5.48xlarge")
    assert summary.nodes[0].verdict == "replace"
    assert kinds(summary) == [
        ("ip-10-1-45-14", 1, None, "xid"), ("ip-10-1-45-14", 1, None, "ecc_dbe"),
        ("ip-10-1-45-14", 3, None, "row_remap_failure"), ("ip-10-1-45-14", 3, None, "uncorrectable_remapped_rows"),
        ("ip-10-1-45-14", 6, None, "correctable_remapped_rows"),
    ]
    assert summary.panels == {"uncorrectable_remapped_rows": 2, "correctable_remapped_rows": 5, "xid_errors": 1,
                              "row_remap_failures": 1, "thermal_violations": 0, "missing_gpus": 0}
    assert summary.healthy_gpu_share == 0.875  # GPU 1 has XID 48 and a DBE
    # correctable rows are information, not a reason
    shown = [reason_texts.shown(reason) for reason in summary.nodes[0].reasons]
    assert shown and not any("correctable errors" in reason and "uncorrectable" not in reason for reason in shown)


def test_uncorrectable_rows_policy_can_mark_replacement():
    summary = summarize(read("dcgm_p5_remapped_rows.prom"), "p5.48xlarge", uncorrectable_rows_replace_at=2)
    fault = next(f for f in summary.faults if f.kind == "uncorrectable_remapped_rows")
    assert (fault.verdict, fault.severity) == ("replace", "critical")


def test_mig_and_kubernetes_variants():
    mig = summarize(read("dcgm_p5_mig.prom"), "p5.48xlarge")
    assert (mig.nodes[0].gpus_seen, mig.nodes[0].missing_gpus, mig.nodes[0].verdict) == (8, [], "degraded")
    k8s = summarize(read("dcgm_p5_kubernetes.prom"), "p5.48xlarge")
    (fault,) = k8s.faults
    assert (fault.gpu, fault.xid, fault.pod, fault.verdict) == (7, 31, "llm-train-worker-1", "degraded")


def test_sentinels_raise_no_faults():
    summary = summarize(read("dcgm_p5_sentinels.prom"), "p5.48xlarge")
    assert summary.faults == []
    assert summary.panels["uncorrectable_remapped_rows"] == 0


def test_thermal_violation_growth_needs_previous_state():
    first = summarize(read("dcgm_p5_hostname_lowercase.prom"), "p5.48xlarge")
    assert first.faults == []  # first report: baseline only
    assert {host: baselines.unpack(v) for host, v in first.state["gpu"].items()} == {
        "ip-10-1-45-15": {"4": [120000, 3000000]}}  # stored packed, one string per host
    state = json.loads(json.dumps(first.state))  # as stored in a JSONField
    second = summarize(read("dcgm_p5_hostname_lowercase_later.prom"), "p5.48xlarge", state)
    (fault,) = second.faults
    assert (fault.kind, fault.gpu, fault.value, fault.verdict) == ("thermal_violation", 4, 330000, "degraded")
    assert second.panels["thermal_violations"] == 1
    assert second.nodes[0].verdict == "degraded"
    # the same text again: nothing grew
    assert summarize(read("dcgm_p5_hostname_lowercase_later.prom"), "p5.48xlarge", second.state).faults == []


def test_efa_counters_growth_and_missing_device():
    first = summarize(read("efa_p5_two_nodes.prom"), "p5.48xlarge")
    assert kinds(first) == [("ip-10-1-45-13", None, None, "efa_device_missing")]
    second = summarize(read("efa_p5_two_nodes_later.prom"), "p5.48xlarge", first.state)
    grown = {(f.device, f.kind): f.value for f in second.faults if f.device}
    assert grown == {("rdmap114s0", "efa_rx_drops"): 150, ("rdmap114s0", "efa_retrans_timeout"): 3,
                     ("rdmap79s0", "efa_unresponsive_remote"): 2}
    assert [n.verdict for n in second.nodes] == ["healthy", "degraded"]
    assert second.nodes[1].efa_devices_seen == 31


def test_counter_reset_counts_as_growth():
    first = summarize(read("efa_p5_two_nodes_later.prom"), "p5.48xlarge")
    second = summarize(read("efa_p5_two_nodes.prom"), "p5.48xlarge", first.state)
    drops = next(f for f in second.faults if f.kind == "efa_rx_drops")
    assert drops.value == 100  # 250 -> 100: the exporter restarted, all 100 are new


def test_xid_new_flag_uses_previous_state():
    first = summarize(read("dcgm_p5_xid79_missing_gpu.prom"), "p5.48xlarge")
    assert next(f for f in first.faults if f.kind == "xid").new is None
    again = summarize(read("dcgm_p5_xid79_missing_gpu.prom"), "p5.48xlarge", first.state)
    assert next(f for f in again.faults if f.kind == "xid").new is False


def test_parsed_scrape_is_accepted_and_output_is_json_safe():
    summary = summarize(parse(read("dcgm_p5_remapped_rows.prom")), "p5.48xlarge")
    data = json.loads(json.dumps(summary.to_dict(include_state=True)))
    assert data["nodes"][0]["verdict"] == "replace"
    assert data["verdict_counts"] == {"healthy": 0, "degraded": 0, "reset_gpu": 0, "reboot": 0, "replace": 1}
    assert data["faults"][0]["kind"] == "xid" and data["faults"][0]["action"] == "reset the GPU"
    assert "state" in data and "state" not in summary.to_dict()


def test_unknown_instance_type():
    with pytest.raises(UnknownInstanceType):
        summarize(read("dcgm_p5_healthy.prom"), "p9.96xlarge")
    summary = summarize(read("dcgm_p5_xid79_missing_gpu.prom"), None)
    assert summary.nodes[0].expected_gpus is None
    assert summary.nodes[0].missing_gpus == []


def test_verdict_order():
    assert VERDICTS == ("healthy", "degraded", "reset_gpu", "reboot", "replace")
    assert worse("reboot", "degraded") == "reboot"
    assert worse("healthy", "replace") == "replace"
