"""Pulling from a real Prometheus (Debian's binary) that scrapes a tiny exporter serving sample text,
and SigV4 signing for Amazon Managed Service for Prometheus checked on a real HTTP server."""
from __future__ import annotations

import shutil
import socket
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests

from clusters.health.choices import AuthKind
from clusters.health.ingest import pull as prometheus_pull
from clusters.health.ingest import service as services
from clusters.health.models import ClusterHealthConfig, HealthReport
from clusters.health.readers.exposition import parse
from clusters.health.readers.summary import summarize
from clusters.health.tasks import pull_all, pull_cluster
from portal.core import outbound
from tests.health.factories_health import ClusterFactory, sample

PROMETHEUS = shutil.which("prometheus") or ("/usr/bin/prometheus" if shutil.os.path.exists("/usr/bin/prometheus") else None)
EXPORTED = sample("dcgm_p5_xid79_missing_gpu.prom") + sample("efa_p5_two_nodes.prom")
# The DCGM sample carries both utilization families per GPU; neuron-monitor's NeuronCore utilization is added.
UTILIZATION = "".join(f'neuroncore_utilization_ratio{{instance="ip-10-1-46-7:8000",instance_id="i-0abc",neuroncore="{core}"}} '
                      f"{core / 10}\n" for core in range(4))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Exporter(BaseHTTPRequestHandler):
    body = (EXPORTED + UTILIZATION).encode()
    seen: list = []

    def do_GET(self):  # noqa: N802
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def do_POST(self):  # noqa: N802  (records what a client sends, for the SigV4 test)
        length = int(self.headers.get("Content-Length") or 0)
        type(self).seen.append((self.path, dict(self.headers.items()), self.rfile.read(length)))
        payload = b'{"status":"success","data":{"resultType":"vector","result":[]}}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def exporter():
    server = ThreadingHTTPServer(("127.0.0.1", _free_port()), _Exporter)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def prometheus(exporter, tmp_path_factory):
    if PROMETHEUS is None:
        pytest.skip("the prometheus binary is not installed (Debian package 'prometheus')")
    tmp = tmp_path_factory.mktemp("prometheus")
    (tmp / "prometheus.yml").write_text(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        "scrape_configs:\n  - job_name: gpu\n    honor_labels: true\n"
        f"    static_configs:\n      - targets: ['{exporter}']\n"
    )
    port = _free_port()
    with open(tmp / "prometheus.log", "wb") as log:
        proc = subprocess.Popen(
            [PROMETHEUS, f"--config.file={tmp / 'prometheus.yml'}", f"--storage.tsdb.path={tmp / 'data'}",
             f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
            stdout=subprocess.DEVNULL, stderr=log,
        )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    try:
        while True:
            if proc.poll() is not None:
                pytest.fail(f"prometheus exited: {(tmp / 'prometheus.log').read_text()[-2000:]}")
            try:
                answer = requests.get(f"{url}/api/v1/query", params={"query": "count(DCGM_FI_DEV_GPU_TEMP)"},
                                      timeout=2).json()
                results = answer.get("data", {}).get("result", [])
                efa = requests.get(f"{url}/api/v1/query", params={"query": "count(node_amazonefa_rx_drops)"},
                                   timeout=2).json().get("data", {}).get("result", [])
                if results and float(results[0]["value"][1]) == 7 and efa:
                    break
            except (requests.RequestException, ValueError):
                pass
            if time.monotonic() > deadline:
                pytest.fail("prometheus did not scrape the exporter in 90 s")
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(autouse=True)
def _local_listeners_allowed(outbound_allows_local):
    """These tests pull from a Prometheus and a recorder on 127.0.0.1, which only an operator's
    allow-list lets the guarded client reach (tests/portal/test_outbound.py proves the refusal)."""


def test_pull_gives_the_same_summary_as_the_text(db, prometheus):
    config = ClusterHealthConfig(pull_url=prometheus, auth_kind=AuthKind.NONE)
    pulled = summarize(prometheus_pull.pull(config), "p5.48xlarge")
    pushed = summarize(parse(EXPORTED), "p5.48xlarge")
    assert pulled.to_dict() == pushed.to_dict()
    node = {n.hostname: n for n in pulled.nodes}
    assert node["ip-10-1-45-13"].verdict == "reboot" and node["ip-10-1-45-13"].missing_gpus == [5]
    assert node["ip-10-1-45-12"].efa_devices_seen == 32


def test_pull_task_ingests_and_records_errors(world, prometheus):
    cluster = ClusterFactory(organization=world.org_a)
    config = ClusterHealthConfig.objects.create(cluster=cluster, pull_enabled=True, pull_url=prometheus)
    report_id = pull_cluster(config.pk)
    report = HealthReport.objects.get(pk=report_id)
    assert (report.source, report.xid_errors, report.missing_gpus, report.node_count) == ("pull", 1, 1, 2)
    config.pull_url = f"http://127.0.0.1:{_free_port()}"  # nothing listens there
    config.save()
    assert pull_cluster(config.pk) is None
    config.refresh_from_db()
    assert config.last_pull_error == outbound.UNREACHABLE and config.last_pull_status is None
    assert HealthReport.objects.count() == 1


def test_pull_all_queues_configured_clusters(world):
    ClusterHealthConfig.objects.create(cluster=ClusterFactory(organization=world.org_a), pull_enabled=True,
                                       pull_url="http://127.0.0.1:9")
    ClusterHealthConfig.objects.create(cluster=ClusterFactory(organization=world.org_a), pull_enabled=False,
                                       pull_url="http://127.0.0.1:9")
    assert pull_all() == 1


def test_periodic_task_is_scheduled(db):
    from django_celery_beat.models import PeriodicTask

    task = PeriodicTask.objects.get(task="clusters.health.tasks.pull_all")
    assert task.enabled and task.interval.every == 5 and task.interval.period == "minutes"


def test_basic_and_bearer_auth_headers(exporter, db):
    _Exporter.seen.clear()
    for kind, extra in ((AuthKind.BASIC, {"username": "u", "secret": "p"}), (AuthKind.BEARER, {"secret": "tkn"})):
        config = ClusterHealthConfig(pull_url=f"http://{exporter}/prom", auth_kind=kind, **extra)
        with pytest.raises(prometheus_pull.PullError, match="instant vector|no usable"):
            prometheus_pull.pull(config)
    (path1, basic, _), (path2, bearer, _) = _Exporter.seen
    assert path1 == path2 == "/prom/api/v1/query"
    assert basic["Authorization"] == "Basic dTpw" and bearer["Authorization"] == "Bearer tkn"


def test_sigv4_signs_with_the_organizations_assumed_role(aws, world):
    """AMP requests are signed with the credentials of the organization's role (assumed through the
    embedded STS), never with the portal's own; the region is the workspace host's."""
    from portal.core import aws as portal_aws

    world.org_a.external_id = "ext-1"
    world.org_a.save()
    cluster = ClusterFactory(organization=world.org_a)
    config = ClusterHealthConfig(cluster=cluster, auth_kind=AuthKind.SIGV4, aws_region="ap-northeast-1",
                                 pull_url="https://aps-workspaces.us-west-2.amazonaws.com/workspaces/ws-123")
    url, body, headers = prometheus_pull.prepare(config)
    assumed = portal_aws._assumed(world.org_a.role_arn, "ext-1", world.org_a.home_region)
    assert url.endswith("/workspaces/ws-123/api/v1/query") and body.startswith(b"query=")
    auth = headers["Authorization"]
    assert auth.startswith(f"AWS4-HMAC-SHA256 Credential={assumed['AccessKeyId']}/")
    assert assumed["AccessKeyId"] != "testing"  # not the portal's own key from the environment
    assert "/us-west-2/aps/aws4_request" in auth and headers["X-Amz-Security-Token"] == assumed["SessionToken"]
    assert headers["X-Amz-Date"].endswith("Z") and len(headers["X-Amz-Date"]) == 16


def test_sigv4_is_refused_without_a_role_or_to_other_hosts(exporter, world):
    _Exporter.seen.clear()
    world.org_a.role_arn = ""
    world.org_a.save()
    cluster = ClusterFactory(organization=world.org_a)
    to_recorder = ClusterHealthConfig(cluster=cluster, auth_kind=AuthKind.SIGV4, aws_region="ap-northeast-1",
                                      pull_url=f"http://{exporter}/workspaces/ws-123")
    with pytest.raises(prometheus_pull.PullError, match="only for https Amazon Managed Prometheus"):
        prometheus_pull.fetch(to_recorder)
    no_role = ClusterHealthConfig(cluster=cluster, auth_kind=AuthKind.SIGV4, aws_region="ap-northeast-1",
                                  pull_url="https://aps-workspaces.ap-northeast-1.amazonaws.com/workspaces/ws-1")
    with pytest.raises(prometheus_pull.PullError, match="could not assume the organization's IAM role"):
        prometheus_pull.fetch(no_role)
    assert _Exporter.seen == []


def test_converter_maps_exported_labels():
    data = {"status": "success", "data": {"resultType": "vector", "result": [
        {"metric": {"__name__": "node_amazonefa_rx_drops", "device": "rdmap79s0", "exported_instance": "ip-1:9109",
                    "instance": "prom:9090", "job": "fed"}, "value": [1700000000, "3"]},
        {"metric": {"__name__": "DCGM_FI_DEV_XID_ERRORS", "gpu": "0", "Hostname": "ip-1"}, "value": [1, "NaN"]},
    ]}}
    families = {f.name: f for f in prometheus_pull.to_families(data)}
    sample_ = families["node_amazonefa_rx_drops"].samples[0]
    assert sample_.labels["instance"] == "ip-1:9109" and sample_.value == 3.0
    scrape = prometheus_pull.parse_families(families.values())
    assert set(scrape.efa) == {"ip-1"} and scrape.gpus["ip-1"][0].xid is None


def test_pulled_report_through_service(world, prometheus):
    cluster = ClusterFactory(organization=world.org_a)
    config = ClusterHealthConfig(pull_url=prometheus)
    ingested = services.ingest(cluster, prometheus_pull.pull(config), "pull")
    # Only the health, utilization and EFA traffic series are queried (704 of the exporters' samples: 14 of them the
    # GPUs' utilization, 4 the NeuronCores', 252 the EFA devices' traffic counters), and they give the same faults.
    assert ingested.report.samples == 704
    assert ingested.report.fault_count == len(summarize(parse(EXPORTED), "p5.48xlarge").faults) == 3


@pytest.mark.worker
def test_a_real_worker_pulls_through_the_health_queue(outbound_allows_local, celery_worker_process, prometheus):
    """The beat schedule's task name reaches a worker on the "health" queue, which pulls and ingests."""
    from portal.celery import app
    from tests.factories import OrganizationFactory

    cluster = ClusterFactory(organization=OrganizationFactory(slug="pull-org"))
    config = ClusterHealthConfig.objects.create(cluster=cluster, pull_enabled=True, pull_url=prometheus)
    assert app.amqp.router.route({}, "clusters.health.tasks.pull_cluster")["queue"].name == "health"
    report_id = app.send_task("clusters.health.tasks.pull_cluster", args=[config.pk],
                              ignore_result=False).get(timeout=90)
    report = HealthReport.objects.get(pk=report_id)
    assert (report.cluster_id, report.source, report.xid_errors) == (cluster.pk, "pull", 1)


def test_pull_reads_utilization_into_the_fields_a_push_fills(db, prometheus):
    """GR engine activity and GPU utilization per GPU, NeuronCore utilization per core: the same as the text."""
    config = ClusterHealthConfig(pull_url=prometheus, auth_kind=AuthKind.NONE)
    pulled, pushed = prometheus_pull.pull(config), parse(EXPORTED + UTILIZATION)
    utilization = {(host, g): (r.gr_engine_active, r.gpu_util) for host, node in pushed.gpus.items()
                   for g, r in node.items()}
    assert len(utilization) == 7 and all(a is not None and u is not None for a, u in utilization.values())
    assert {(host, g): (r.gr_engine_active, r.gpu_util) for host, node in pulled.gpus.items()
            for g, r in node.items()} == utilization
    assert pulled.neuroncores == pushed.neuroncores == {"ip-10-1-46-7": {"0": 0.0, "1": 0.1, "2": 0.2, "3": 0.3}}
