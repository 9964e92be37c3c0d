"""dcgm-exporter / EFA exporter text -> per-node readings."""

from pathlib import Path

import pytest

from clusters.health.readers.exposition import parse
from clusters.health.readers.prometheus import ParseError, host_of

DATA = Path(__file__).resolve().parents[1] / "data"


def read(name: str) -> str:
    return (DATA / name).read_text()


def test_healthy_node_has_eight_gpus_with_zero_health_fields():
    scrape = parse(read("dcgm_p5_healthy.prom"))
    assert list(scrape.gpus) == ["ip-10-1-45-12"]
    gpus = scrape.gpus["ip-10-1-45-12"]
    assert sorted(gpus) == list(range(8))
    gpu0 = gpus[0]
    assert gpu0.uuid == "GPU-4fcab9d2-50f0-dd23-c4fa-c6c8cf9f3ca5"
    assert (gpu0.xid, gpu0.uncorrectable_remapped_rows, gpu0.row_remap_failure, gpu0.ecc_dbe) == (0, 0, 0, 0)
    assert scrape.models["ip-10-1-45-12"] == "NVIDIA H100 80GB HBM3"
    assert scrape.families == 27
    assert scrape.samples == 27 * 8


def test_counter_families_are_matched_by_family_name():
    # prometheus_client reports DCGM_FI_DEV_THERMAL_VIOLATION samples as ..._total.
    scrape = parse(read("dcgm_p5_hostname_lowercase.prom"))
    gpu4 = scrape.gpus["ip-10-1-45-15"][4]
    assert gpu4.thermal_violation == 120000
    assert gpu4.power_violation == 3000000


def test_xid_with_err_code_and_missing_gpu():
    gpus = parse(read("dcgm_p5_xid79_missing_gpu.prom")).gpus["ip-10-1-45-13"]
    assert sorted(gpus) == [0, 1, 2, 3, 4, 6, 7]
    assert gpus[2].xid == 79
    assert gpus[2].xid_message == "GPU has fallen off the bus"


def test_mig_instances_do_not_count_as_gpus():
    scrape = parse(read("dcgm_p5_mig.prom"))
    assert scrape.samples == 27 * 16
    gpus = scrape.gpus["ip-10-1-45-16"]
    assert sorted(gpus) == list(range(8))
    assert gpus[0].xid == 13  # seen on GPU instance 2 only
    assert gpus[1].xid == 0


def test_kubernetes_labels_are_kept_on_xid():
    gpus = parse(read("dcgm_p5_kubernetes.prom")).gpus["ip-10-1-45-20.ec2.internal"]
    assert (gpus[7].xid, gpus[7].pod, gpus[7].namespace) == (31, "llm-train-worker-1", "geniac-org-a")


def test_sentinels_are_missing_values_not_counts():
    gpus = parse(read("dcgm_p5_sentinels.prom")).gpus["ip-10-1-45-17"]
    assert all(gpu.uncorrectable_remapped_rows is None for gpu in gpus.values())
    assert gpus[0].row_remap_failure is None
    assert gpus[2].thermal_violation is None
    assert gpus[5].ecc_dbe is None
    assert gpus[6].xid is None
    assert gpus[1].row_remap_failure == 0


def test_efa_devices_per_instance_host():
    scrape = parse(read("efa_p5_two_nodes.prom"))
    assert sorted(scrape.efa) == ["ip-10-1-45-12", "ip-10-1-45-13"]
    assert len(scrape.efa["ip-10-1-45-12"]) == 32
    node = scrape.efa["ip-10-1-45-13"]
    assert len(node) == 31
    assert node["rdmap96s0"].rdma_read_wr_err == 3
    assert node["rdmap114s0"].rx_drops == 100
    assert node["rdmap114s0"].retrans_timeout_events == 1
    assert scrape.gpus == {}


def test_broken_line_reports_its_number():
    with pytest.raises(ParseError) as excinfo:
        parse(read("dcgm_p5_broken_line.prom"))
    assert excinfo.value.line == 45
    assert str(excinfo.value).startswith("line 45: not Prometheus text format")


@pytest.mark.parametrize("text, message", [
    ("", "input is empty"),
    ("<html><body>502 Bad Gateway</body></html>\n", "line 1: not Prometheus text format"),
    (b"\x89PNG\r\n\x1a\n\x00\x00", "not UTF-8"),
    ('node_load1{instance="a:9100"} 0.5\n', "no dcgm-exporter"),
])
def test_not_a_health_scrape(text, message):
    with pytest.raises(ParseError, match=message):
        parse(text)


@pytest.mark.parametrize("labels, host", [
    ({"Hostname": "a", "hostname": "b"}, "a"),
    ({"hostname": "b", "instance": "c:9400"}, "b"),
    ({"instance": "10.1.2.3:9400"}, "10.1.2.3"),
    ({"instance": "[fd00::1]:9400"}, "fd00::1"),
    ({"Hostname": "", "instance": "node-7"}, "node-7"),
    ({}, "unknown"),
])
def test_host_of(labels, host):
    assert host_of(labels) == host


def test_concatenated_node_scrapes_and_preparsed_families():
    from prometheus_client.parser import text_string_to_metric_families

    from clusters.health.readers.prometheus import parse_families

    text = read("dcgm_p5_healthy.prom") + read("dcgm_p5_xid79_missing_gpu.prom") + read("efa_p5_two_nodes.prom")
    scrape = parse(text)
    assert scrape.hostnames == ["ip-10-1-45-12", "ip-10-1-45-13"]
    assert (len(scrape.gpus["ip-10-1-45-12"]), len(scrape.gpus["ip-10-1-45-13"])) == (8, 7)
    assert (len(scrape.efa["ip-10-1-45-12"]), len(scrape.efa["ip-10-1-45-13"])) == (32, 31)
    again = parse_families(text_string_to_metric_families(text))
    assert again.to_dict() == scrape.to_dict()
