"""Signals an exporter does not export read "not collected", on the health page and in every Grafana panel,
never as a flat zero: dcgm-exporter's default counters lack double-bit ECC and power violations, and older EFA
node exporters lack the retransmit-timeout, unresponsive-remote and impaired-connection counters."""
from __future__ import annotations

import json
import shutil
import subprocess

import pytest
import yaml
from django.urls import reverse

from clusters.health.alerts import dashboards
from clusters.health.ingest import service as services
from clusters.health.readers.summary import summarize
from tests.health.factories_health import ClusterFactory
from tests.samples import REPOSITORY as ROOT
from tests.samples import text

OLD_EFA = ("efa_retrans_timeout", "efa_unresponsive_remote", "efa_impaired_remote")


def test_an_older_efa_exporter_lacks_three_counters():
    summary = summarize(text("efa_exporter_curl_progress.txt"), "p4d.24xlarge")
    assert summary.collected["efa"] is True
    assert [summary.collected[key] for key in OLD_EFA] == [False, False, False]
    missing = {m["signal"]: m["metric"] for m in summary.missing_signals}
    assert missing["efa_retrans_timeout"] == "node_amazonefa_retrans_timeout_events"
    assert missing["efa_impaired_remote"] == "node_amazonefa_impaired_remote_conn_events"


def test_a_current_efa_exporter_has_them():
    summary = summarize((ROOT / "tests" / "data" / "efa_p5_two_nodes.prom").read_text(), "p5.48xlarge")
    assert [summary.collected[key] for key in OLD_EFA] == [True, True, True]
    assert not {m["signal"] for m in summary.missing_signals} & set(OLD_EFA)


def test_default_dcgm_counters_lack_ecc_and_power():
    summary = summarize(text("dcgm_kops_l4_no_xid.txt"), None)
    assert (summary.collected["ecc_dbe"], summary.collected["power_violations"]) == (False, False)
    assert {"ecc_dbe", "power_violations"} <= {m["signal"] for m in summary.missing_signals}


def test_the_health_page_lists_them_as_not_collected(client, world):
    cluster = ClusterFactory(organization=world.org_a, instance_type="p4d.24xlarge")
    services.ingest(cluster, text("efa_exporter_curl_progress.txt"), "push")
    client.force_login(world.lead_a)
    page = client.get(reverse("health:cluster_health", args=[cluster.pk])).content.decode()
    assert "efa_retrans_timeout" in page and "node_amazonefa_unresponsive_remote_events" in page


def _panels() -> list[dict]:
    return [panel for board in (dashboards.gpu_health(), dashboards.efa()) for panel in board["panels"]]


def test_every_panel_says_not_collected_when_it_has_no_value():
    for panel in _panels():
        assert panel["fieldConfig"]["defaults"]["noValue"] == "not collected", panel["title"]
    for key in ("xid_errors", "row_remap_failures", "thermal_violations", "missing_gpus"):
        assert "and on() count(" in dashboards.FIGURE_EXPRESSIONS[key], key
    assert json.loads(dashboards.DIRECTORY.joinpath("geniac-gpu-health.json").read_text()) == dashboards.gpu_health()


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool is not installed (Debian: prometheus)")
def test_the_thermal_panel_is_empty_without_the_counter_and_zero_with_it(tmp_path):
    expr = dashboards.FIGURE_EXPRESSIONS["thermal_violations"].replace("$cluster", ".*")
    gpu = 'Hostname="ip-10-1-0-7", UUID="GPU-0", gpu="0", cluster="alpha"'
    cases = {"tests": [
        {"interval": "1m", "input_series": [{"series": f"DCGM_FI_DEV_GPU_TEMP{{{gpu}}}", "values": "40x20"}],
         "promql_expr_test": [{"expr": expr, "eval_time": "15m", "exp_samples": []}]},
        {"interval": "1m", "input_series": [{"series": f"DCGM_FI_DEV_GPU_TEMP{{{gpu}}}", "values": "40x20"},
                                            {"series": f"DCGM_FI_DEV_THERMAL_VIOLATION{{{gpu}}}", "values": "5x20"}],
         "promql_expr_test": [{"expr": expr, "eval_time": "15m", "exp_samples": [{"labels": "{}", "value": 0}]}]},
    ]}
    path = tmp_path / "panels.test.yml"
    path.write_text(yaml.safe_dump(cases))
    result = subprocess.run(["promtool", "test", "rules", str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
