"""Alert rules from the readers' threshold table, and SNS-delivered alerts opening and clearing faults over HTTP."""
from __future__ import annotations

import base64
import json
import shutil
import subprocess
import threading
import uuid
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.x509.oid import NameOID

from clusters.blueprints import cfn
from clusters.health.alerts import rules as alerts
from clusters.health.ingest import alert_faults
from clusters.health.ingest import service as services
from clusters.health.ingest.sns import SIGNED_FIELDS
from clusters.health.models import GpuFault, SnsMessage
from clusters.health.readers import summary, thresholds
from portal.core.aws import client as aws_client
from tests.clusters.factories_clusters import launched_cluster, ready_cluster, run_pipeline

XID_79 = ('DCGM_FI_DEV_XID_ERRORS{gpu="3",UUID="GPU-3",modelName="NVIDIA H100 80GB HBM3",Hostname="ip-10-1-0-7"} 79\n')


def test_the_blueprint_carries_the_rules_generated_from_the_threshold_table():
    source = alerts.BLUEPRINT.read_text()
    assert alerts.render_blueprint(source) == source, "run python -m clusters.health.alerts.rules"
    template = cfn.load(alerts.BLUEPRINT)
    data = yaml.safe_load(template["Resources"]["AlertRules"]["Properties"]["Data"])
    rules = data["groups"][0]["rules"]
    assert rules == alerts.rules()
    kinds = {r["labels"]["geniac_kind"] for r in rules}
    assert set(thresholds.THRESHOLDS) <= kinds  # every threshold row has its rule
    by_name = {r["alert"]: r for r in rules}
    assert by_name["GpuXidRebootNode"]["expr"] == "DCGM_FI_DEV_XID_ERRORS == 79"
    assert "== 48" in by_name["GpuXidResetGpu"]["expr"] and "== 79" not in by_name["GpuXidResetGpu"]["expr"]
    assert by_name["GpuThermalViolation"]["expr"] == 'increase({__name__=~"DCGM_FI_DEV_THERMAL_VIOLATION(_total)?"}[10m]) > 0'
    assert by_name["NodeNotReporting"]["for"] == f"{thresholds.NODE_SILENT_MINUTES}m"
    # The summary's EFA kinds are the table's.
    assert {k for k, _ in summary._EFA_KINDS.values()} == {t.kind for t in thresholds.EFA_THRESHOLDS.values()}
    definition = yaml.safe_load(template["Resources"]["PrometheusWorkspace"]["Properties"]["AlertManagerDefinition"]["Fn::Sub"])
    receiver = yaml.safe_load(definition["alertmanager_config"])["receivers"][0]["sns_configs"][0]
    assert receiver["topic_arn"] == "${AlertTopic}" and receiver["send_resolved"] is True


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool is not installed (Debian: prometheus)")
def test_promtool_accepts_the_generated_rules(tmp_path):
    path = tmp_path / "rules.yml"
    path.write_text(alerts.rules_text())
    result = subprocess.run(["promtool", "check", "rules", str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(alerts.rules())} rules found" in result.stdout


def test_the_rule_file_beside_its_cases_is_the_generated_one():
    assert alerts.main(["--check"]) == 0, "run python -m clusters.health.alerts.rules"
    assert yaml.safe_load(alerts.RULES_FILE.read_text())["groups"][0]["rules"] == alerts.rules()


def test_a_missing_gpu_is_keyed_on_the_gpu_not_the_exporter_pod():
    expr = {r["alert"]: r for r in alerts.rules()}["GpuMissing"]["expr"]
    for label in ("pod", "instance", "container", "namespace"):
        assert label not in expr.replace("geniac_cluster_id", "")
    assert "by (cluster, geniac_cluster_id, Hostname, hostname, UUID, gpu)" in expr


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool is not installed (Debian: prometheus)")
def test_promtool_rule_cases_pass():
    # XID 79 and a row-remap failure are critical, a thermal violation warns, an exporter restart raises nothing
    # and a node gone makes its GPUs missing (gpu-health.test.yml)
    result = subprocess.run(["promtool", "test", "rules", str(alerts.RULES_TEST)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout + result.stderr


def test_the_summary_judges_by_the_same_table(monkeypatch):
    text = 'DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS{gpu="0",Hostname="h1"} 3\n'
    assert [f.kind for f in summary.summarize(text, None).faults] == ["uncorrectable_remapped_rows"]
    monkeypatch.setitem(thresholds.THRESHOLDS, "uncorrectable_remapped_rows",
                        thresholds.Threshold("uncorrectable_remapped_rows", "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", above=5))
    assert summary.summarize(text, None).faults == []


# --- SNS: a test certificate, served over HTTP, signs the messages -------------------------------------------------

class _Sns:
    """A signing key and its certificate served on 127.0.0.1, and a SubscribeURL that records its calls."""

    def __init__(self):
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "sns.test")])
        now = datetime.now(UTC)
        cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(self.key.public_key())
                .serial_number(x509.random_serial_number()).not_valid_before(now - timedelta(days=1))
                .not_valid_after(now + timedelta(days=1)).sign(self.key, hashes.SHA256()))
        self.pem = cert.public_bytes(serialization.Encoding.PEM)
        self.confirmed: list[str] = []
        sns = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - http.server's name
                if self.path.endswith(".pem"):
                    body = sns.pem
                else:
                    sns.confirmed.append(self.path)
                    body = b"<ConfirmSubscriptionResponse/>"
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def sign(self, data: dict, version: str = "2", cert_url: str | None = None) -> dict:
        data = {**data, "SignatureVersion": version, "SigningCertURL": cert_url or f"{self.base}/SimpleNotificationService-test.pem"}
        text = "".join(f"{k}\n{data[k]}\n" for k in SIGNED_FIELDS[data["Type"]] if k in data).encode()
        algorithm = hashes.SHA1() if version == "1" else hashes.SHA256()
        data["Signature"] = base64.b64encode(self.key.sign(text, padding.PKCS1v15(), algorithm)).decode()
        return data


@pytest.fixture
def sns_server(settings, outbound_allows_local):
    server = _Sns()
    settings.HEALTH_SNS_CERT_HOSTS = ["127.0.0.1"]
    yield server
    server.server.shutdown()


def _notification(topic, alerts_list, *, when=None, message_id=None):
    stamp = (when or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    return {"Type": "Notification", "MessageId": message_id or str(uuid.uuid4()), "TopicArn": topic,
            "Subject": "GENIAC firing", "Timestamp": stamp,
            "Message": json.dumps({"version": "4", "status": "firing", "receiver": "portal", "alerts": alerts_list})}


def _xid_alert(cluster, status="firing", code=79):
    return {"status": status, "fingerprint": "f1", "startsAt": "2026-12-01T00:00:00Z", "endsAt": "0001-01-01T00:00:00Z",
            "labels": {"alertname": "GpuXidRebootNode", "geniac_kind": "xid", "severity": "critical",
                       "cluster": cluster.name, "Hostname": "ip-10-1-0-7", "gpu": "3", "UUID": "GPU-3"},
            "annotations": {"xid": str(code), "value": str(code), "summary": "XID 79"}}


def _observability(org):
    obs = launched_cluster(org, name="obs", blueprint="observability", full_stack=False)
    run_pipeline(obs.jobs.get())
    obs.refresh_from_db()
    return obs


def test_a_signed_sns_alert_opens_and_clears_the_fault_a_push_would_open_over_http(
        world, aws, live_server, sns_server):
    obs = _observability(world.org_a)
    topic = obs.outputs["AlertTopicArn"]
    assert topic.startswith("arn:aws:sns:")
    workspace = obs.outputs["PrometheusWorkspaceId"]
    namespace = aws_client("amp", organization=world.org_a).describe_rule_groups_namespace(
        workspaceId=workspace, name="geniac-gpu-health")["ruleGroupsNamespace"]
    assert yaml.safe_load(namespace["data"])["groups"][0]["rules"] == alerts.rules()
    cluster = ready_cluster(world.org_a, name="train-1", instance_type="p5.48xlarge")
    url = f"{live_server.url}/api/health/alerts/sns/"

    def post(data):
        return requests.post(url, data=json.dumps(data), headers={"Content-Type": "text/plain; charset=UTF-8"}, timeout=30)

    # The subscription is confirmed through its SubscribeURL.
    confirm = sns_server.sign({"Type": "SubscriptionConfirmation", "MessageId": str(uuid.uuid4()), "TopicArn": topic,
                               "Token": "tok", "Message": "confirm", "Timestamp": datetime.now(UTC).isoformat(),
                               "SubscribeURL": f"{sns_server.base}/?Action=ConfirmSubscription&Token=tok"}, version="1")
    assert post(confirm).status_code == 200 and sns_server.confirmed == ["/?Action=ConfirmSubscription&Token=tok"]

    firing = sns_server.sign(_notification(topic, [_xid_alert(cluster)]), version="1")
    answer = post(firing)
    assert answer.status_code == 200, answer.text
    assert answer.json()["detail"].startswith("1 opened")
    fault = GpuFault.objects.get(cluster=cluster)
    assert (fault.hostname, fault.gpu, fault.kind, fault.xid, fault.cleared_at) == ("ip-10-1-0-7", "3", "xid", 79, None)
    # The same fault a push of the same series opens: compare with an ingestion on another cluster.
    other = ready_cluster(world.org_a, name="train-2", instance_type="p5.48xlarge")
    services.ingest(other, XID_79, "push")
    pushed = GpuFault.objects.get(cluster=other, kind="xid")  # (its other GPUs are missing from the scrape)
    fields = ("kind", "severity", "verdict", "meaning", "action", "xid", "gpu", "hostname", "uuid")
    assert [getattr(fault, f) for f in fields] == [getattr(pushed, f) for f in fields]

    assert post(firing).status_code == 409  # a replay of the same message id
    again = sns_server.sign(_notification(topic, [_xid_alert(cluster)]), version="2")  # a new message, same alert
    assert post(again).json()["detail"].startswith("0 opened, 1 refreshed")
    assert GpuFault.objects.filter(cluster=cluster).count() == 1  # duplicates merge

    stale = sns_server.sign(_notification(topic, [_xid_alert(cluster, "resolved")], when=datetime.now(UTC) - timedelta(hours=2)))
    assert post(stale).status_code == 400
    forged = sns_server.sign(_notification(topic, [_xid_alert(cluster, "resolved")]))
    forged["Message"] = forged["Message"].replace("ip-10-1-0-7", "ip-10-1-0-8")
    assert post(forged).status_code == 403
    elsewhere = sns_server.sign(_notification(topic, [_xid_alert(cluster, "resolved")]),
                                cert_url="https://example.com/SimpleNotificationService-x.pem")
    assert post(elsewhere).status_code == 403
    website = sns_server.sign(_notification(topic, [_xid_alert(cluster, "resolved")]),
                              cert_url="https://sns.evil.s3-website-us-east-1.amazonaws.com/SimpleNotificationService-x.pem")
    assert post(website).status_code == 403
    assert GpuFault.objects.get(pk=fault.pk).cleared_at is None  # nothing refused changed anything

    resolved = sns_server.sign(_notification(topic, [_xid_alert(cluster, "resolved")]))
    assert post(resolved).json()["detail"] == "0 opened, 0 refreshed, 1 cleared, 0 ignored"
    assert GpuFault.objects.get(pk=fault.pk).cleared_at is not None
    assert SnsMessage.objects.count() == 4  # confirmation, firing, again, resolved: refused messages store nothing


def test_alerts_of_unknown_topics_or_other_organizations_change_nothing(world, aws, live_server, sns_server):
    obs = _observability(world.org_a)
    foreign = ready_cluster(world.org_b, name="train-b", instance_type="p5.48xlarge")
    url = f"{live_server.url}/api/health/alerts/sns/"
    unknown = sns_server.sign(_notification("arn:aws:sns:ap-northeast-1:123456789012:nobody", [_xid_alert(foreign)]))
    assert requests.post(url, data=json.dumps(unknown), timeout=30).status_code == 403
    other_org = sns_server.sign(_notification(obs.outputs["AlertTopicArn"], [_xid_alert(foreign)]))
    answer = requests.post(url, data=json.dumps(other_org), timeout=30)
    assert answer.status_code == 200 and answer.json()["detail"].endswith("1 ignored")
    assert not GpuFault.objects.exists()


@pytest.mark.django_db
def test_only_snss_own_hosts_serve_the_certificate():
    from clusters.health.ingest.sns import cert_host_allowed

    assert cert_host_allowed("sns.ap-northeast-1.amazonaws.com") and cert_host_allowed("sns.cn-north-1.amazonaws.com.cn")
    for host in ("sns.evil.s3-website-us-east-1.amazonaws.com", "sns.us-east-1.amazonaws.com.evil.com",
                 "evilsns.us-east-1.amazonaws.com", "127.0.0.1"):
        assert not cert_host_allowed(host), host


@pytest.mark.django_db
def test_each_alert_kind_becomes_the_summarys_fault(world):
    cluster = ready_cluster(world.org_a, name="kinds", instance_type="p5.48xlarge")

    def fault(kind, **labels):
        value = labels.pop("value", "5")
        alert = {"labels": {"geniac_kind": kind, "Hostname": "h1", **labels}, "annotations": {"value": value}}
        return [(f.kind, f.severity, f.gpu, f.device) for f in alert_faults.to_faults(alert, cluster)]

    assert fault("thermal_violation", gpu="1") == [("thermal_violation", "warning", 1, None)]
    assert fault("power_violation", gpu="1") == []  # info level: the push keeps it in the summary only
    assert fault("row_remap_failure", gpu="2", value="1") == [("row_remap_failure", "critical", 2, None)]
    assert fault("efa_rx_drops", device="rdmap16s27") == [("efa_rx_drops", "warning", None, "rdmap16s27")]
    assert fault("missing_gpu", gpu="6") == [("missing_gpu", "critical", 6, None)]
    assert fault("not_reporting", instance="10.1.0.9:9100") == [("not_reporting", "warning", None, None)]
    assert fault("xid", gpu="0", value="45") == []  # XID 45 is informational
