"""dcgm-exporter and EFA exporter scrapes published by NVIDIA, AWS and others, read and summarized.

Expected values were read off the fixtures by hand (see data/real/SOURCES.md).
"""
from __future__ import annotations

import pytest
from django.urls import reverse

from clusters.health.ingest import service as services
from clusters.health.readers import reason_texts
from clusters.health.readers.exposition import parse
from clusters.health.readers.prometheus import ParseError
from clusters.health.readers.summary import summarize
from tests import samples
from tests.health.factories_health import ClusterFactory
from tests.samples import text


def test_readme_scrape_pasted_with_its_commands_and_elisions():
    scrape = parse(text("dcgm_exporter_readme_quickstart.txt"))
    assert scrape.notes == [
        "a pasted command line was removed: 'docker run -d --gpus all --cap-add SYS_ADMIN --rm -p 9400:9400 "
        "nvcr.io/nvidia/k8' (line 1)",
        "a pasted command line was removed: 'curl localhost:9400/metrics' (line 2)",
        "the scrape is an excerpt ('...' lines were removed) (line 9)",
    ]
    assert scrape.families_seen == {"DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_MEM_CLOCK", "DCGM_FI_DEV_MEMORY_TEMP"}
    assert (scrape.hostnames, list(scrape.gpus["unknown"]), scrape.samples) == (["unknown"], [0], 3)
    summary = summarize(scrape, "p5.48xlarge")
    assert (summary.gpus_seen, summary.panels["missing_gpus"]) == (1, 0)  # an excerpt: absent GPUs are not missing
    assert "the scrape is an excerpt: GPUs it leaves out are not reported missing" in summary.notes
    assert not summary.collected["xid_errors"] and not summary.collected["efa"]
    missing = {m["signal"]: m for m in summary.missing_signals}
    assert set(missing) == {"xid_errors", "uncorrectable_remapped_rows", "correctable_remapped_rows",
                            "row_remap_failures", "thermal_violations", "ecc_dbe", "power_violations", "efa"}
    assert "'DCGM_FI_DEV_XID_ERRORS, gauge, Value of the last XID error encountered.'" in missing["xid_errors"]["how"]


def test_l4_node_read_as_p5_is_other_hardware_not_seven_missing_gpus():
    summary = summarize(text("dcgm_kops_l4_no_xid.txt"), "p5.48xlarge")
    (node,) = summary.nodes
    assert (node.hostname, node.model, node.gpus_seen, node.missing_gpus) == (
        "i-030791dc5a37cd257", "NVIDIA L4", 1, [])
    assert (summary.panels["missing_gpus"], summary.gpus_expected, node.verdict) == (0, 1, "degraded")
    assert [f.kind for f in summary.faults] == ["gpu_model_mismatch"]
    assert summary.notes == ["i-030791dc5a37cd257 reports NVIDIA L4 GPUs, not p5.48xlarge's H100: GPU count not "
                             "checked against p5.48xlarge",
                             "XIDs are not collected: the healthy GPU share only covers the signals that are"]
    assert summary.collected == {"xid_errors": False, "uncorrectable_remapped_rows": True,
                                 "correctable_remapped_rows": True, "row_remap_failures": True,
                                 "thermal_violations": False, "ecc_dbe": False, "power_violations": False,
                                 "missing_gpus": True, "efa": False, "efa_retrans_timeout": False,
                                 "efa_unresponsive_remote": False, "efa_impaired_remote": False}
    assert (node.efa_devices_seen, node.efa_collected) == (0, False)


def test_port_forward_noise_and_an_xid_series_with_kubernetes_labels():
    scrape = parse(text("dcgm_lke_rtx4000_with_xid.txt"))
    assert scrape.notes == ["kubectl port-forward messages were removed (line 1)"]
    reading = scrape.gpus["lke529760-766837-0a634ab30000"][0]
    assert (reading.xid, reading.uuid) == (0, "GPU-a8394b51-c086-568a-9f1a-c1e1c934c44c")
    assert scrape.models == {"lke529760-766837-0a634ab30000": "NVIDIA RTX 4000 Ada Generation"}
    summary = summarize(scrape, None)
    assert summary.collected["xid_errors"] and summary.faults == [] and summary.healthy_gpu_share == 1.0


def test_newer_xid_count_metric_is_read_as_an_xid():
    summary = summarize(text("dcgm_exporter_pr239_xid_count.txt"), None)
    (fault,) = summary.faults
    assert (fault.hostname, fault.gpu, fault.kind, fault.xid) == ("workstation", 0, "xid", 42)
    assert (summary.panels["xid_errors"], summary.collected["xid_errors"]) == (1, True)
    assert summary.nodes[0].model == "NVIDIA T400 4GB"


def test_efa_scrape_with_curl_meter_and_trailer():
    scrape = parse(text("efa_exporter_curl_progress.txt"))
    assert scrape.notes == [
        "a pasted command line was removed: 'root@cb9511473ccc:/eks# curl http://127.0.0.1:${LOCAL_PORT}/metrics "
        "| grep \"efa\"' (line 1)",
        "curl's progress meter was removed (line 2)",
        "curl's progress trailer was removed (line 120)",
    ]
    assert sorted(scrape.efa["unknown"]) == ["rdmap144s27", "rdmap160s27", "rdmap16s27", "rdmap32s27"]
    device = scrape.efa["unknown"]["rdmap16s27"]
    assert (device.rdma_read_wr_err, device.rx_drops, device.retrans_timeout_events) == (0, 0, None)
    summary = summarize(scrape, "p4d.24xlarge")
    assert summary.faults == []  # p4d has 4 EFA devices
    assert {m["signal"] for m in summary.missing_signals} == {
        "xid_errors", "uncorrectable_remapped_rows", "correctable_remapped_rows", "row_remap_failures",
        "thermal_violations", "ecc_dbe", "power_violations", "missing_gpus",
        # an older EFA exporter: three counters it does not export read "not collected", not zero
        "efa_retrans_timeout", "efa_unresponsive_remote", "efa_impaired_remote"}
    assert summary.nodes[0].reasons == [{"code": "health.no_dcgm_series", "params": {}}]  # read in each language
    assert reason_texts.shown(summary.nodes[0].reasons[0]) == "no DCGM series for this node: is dcgm-exporter running?"


def test_streamed_file_reads_like_the_text():
    whole = parse(text("dcgm_lke_rtx4000_with_xid.txt"))
    with open(samples.path("dcgm_lke_rtx4000_with_xid.txt"), "rb") as handle:
        streamed = parse(handle)
    assert streamed.to_dict() == whole.to_dict()
    with open(samples.path("efa_exporter_curl_progress.txt")) as handle:
        assert parse(iter(handle)).notes == parse(text("efa_exporter_curl_progress.txt")).notes


def test_a_line_that_is_not_paste_noise_is_still_an_error_with_its_number():
    broken = text("dcgm_lke_rtx4000_with_xid.txt").replace("# HELP DCGM_FI_DEV_MEM_CLOCK", "MEM CLOCK {", 1)
    with pytest.raises(ParseError) as excinfo:
        parse(broken)
    assert excinfo.value.line == 5
    with pytest.raises(ParseError, match="input is empty"):
        parse(iter(["\n", "  \n"]))


def test_parse_dcgm_says_not_collected(capsys):
    from django.core.management import call_command

    call_command("parse_dcgm", str(samples.path("dcgm_kops_l4_no_xid.txt")), "--instance-type", "p5.48xlarge")
    out = capsys.readouterr().out
    assert "  xid_errors: not collected" in out
    assert "i-030791dc5a37cd257: degraded (NVIDIA L4, 1 GPUs, EFA not collected)" in out
    assert "not collected: xid_errors (DCGM_FI_DEV_XID_ERRORS): add this line" in out


def test_dcgm_only_push_shows_efa_and_xid_as_not_collected_not_zero(client, world):
    cluster = ClusterFactory(organization=world.org_a, name="l4-check", instance_type="p5.48xlarge")
    services.ingest(cluster, text("dcgm_kops_l4_no_xid.txt"), "push")
    client.force_login(world.customer_a)
    page = client.get(reverse("health:cluster_health", kwargs={"pk": cluster.pk})).content.decode()
    assert "<td>not collected</td>" in page  # the node's EFA devices
    assert page.count('health-panel-missing') == 2  # XID errors and thermal violations
    assert "reports NVIDIA L4 GPUs, not p5.48xlarge&#x27;s H100" in page
    assert "Not collected by this cluster's exporters: xid_errors, thermal_violations, ecc_dbe, power_violations, efa" in page
