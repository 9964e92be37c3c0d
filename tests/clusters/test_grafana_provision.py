"""The repository's dashboards reach a Grafana workspace through Grafana's HTTP API (a stand-in Grafana on 127.0.0.1)."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import boto3
import pytest
from botocore.stub import Stubber

from clusters.health.alerts import dashboards
from clusters.health.alerts import grafana as grafana_provision


@pytest.fixture
def grafana(outbound_allows_local):
    seen = {"datasources": [], "dashboards": [], "auth": set()}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - http.server's name
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen["auth"].add(self.headers.get("Authorization"))
            if self.path == "/api/datasources":
                status = 409 if seen["datasources"] else 200
                seen["datasources"].append(body)
            else:
                status = 200
                seen["dashboards"].append(body)
            answer = b"{}"
            self.send_response(status)
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}", seen
    server.shutdown()


def test_dashboards_and_the_data_source_are_put_by_uid(grafana):
    url, seen = grafana
    done = grafana_provision.provision(url, "glsa_token", prometheus_endpoint="https://aps-workspaces.ap-northeast-1."
                                       "amazonaws.com/workspaces/ws-1/", region="ap-northeast-1")
    assert done.datasource == "created" and done.dashboards == list(dashboards.TITLES)
    assert seen["auth"] == {"Bearer glsa_token"}
    source = seen["datasources"][0]
    assert source["url"] == "https://aps-workspaces.ap-northeast-1.amazonaws.com/workspaces/ws-1"
    assert source["jsonData"]["sigV4Auth"] is True and source["jsonData"]["sigV4Region"] == "ap-northeast-1"
    assert [(d["dashboard"]["uid"], d["overwrite"]) for d in seen["dashboards"]] == [(u, True) for u in dashboards.TITLES]
    assert seen["dashboards"][0]["dashboard"] == json.loads((dashboards.DIRECTORY / "geniac-gpu-health.json").read_text())
    again = grafana_provision.provision(url, "glsa_token", prometheus_endpoint="https://x", region="ap-northeast-1")
    assert again.datasource == "kept" and len(seen["dashboards"]) == 6


def test_the_token_comes_from_the_portals_service_account():
    client = boto3.client("grafana", region_name="ap-northeast-1", aws_access_key_id="a", aws_secret_access_key="b")
    with Stubber(client) as stub:  # Amazon Managed Grafana's API is not emulated here; botocore checks the calls
        stub.add_response("list_workspace_service_accounts", {"serviceAccounts": [], "workspaceId": "g-1"},
                          {"workspaceId": "g-1"})
        stub.add_response("create_workspace_service_account",
                          {"id": "7", "name": "geniac-portal", "grafanaRole": "ADMIN", "workspaceId": "g-1"},
                          {"workspaceId": "g-1", "name": "geniac-portal", "grafanaRole": "ADMIN"})
        stub.add_response("create_workspace_service_account_token", {
            "serviceAccountId": "7", "workspaceId": "g-1",
            "serviceAccountToken": {"id": "t", "name": "geniac-portal-provision", "key": "glsa_abc"}},
            {"workspaceId": "g-1", "serviceAccountId": "7", "name": "geniac-portal-provision", "secondsToLive": 600})
        assert grafana_provision.workspace_token(client, "g-1") == "glsa_abc"


def _launch_observability(world, name="obs"):
    from clusters.launches import service as launch

    submitted = launch.submit(launch.LaunchRequest(organization=world.org_a, name=name, blueprint="observability",
                                                   region=world.org_a.home_region, parameters={}, user=world.lead_a))
    return submitted.cluster


def _workspace(cluster):
    from sandbox.aws import moto_grafana

    return moto_grafana.workspace(cluster.outputs["GrafanaWorkspaceId"])


@pytest.mark.django_db(transaction=True)
def test_the_launch_fills_the_portals_alert_endpoint_and_provisions_the_dashboards(world, aws, settings):
    from clusters.choices import ClusterState
    from portal.core.aws import client as aws_client
    from tests.clusters.factories_clusters import run_pipeline

    settings.PORTAL_BASE_URL = "https://portal.geniac.example/"
    cluster = _launch_observability(world)
    assert cluster.parameters["observability"]["AlertEndpointUrl"] == \
        "https://portal.geniac.example/api/health/alerts/sns/"
    job = run_pipeline(cluster.jobs.get())
    cluster.refresh_from_db()
    assert cluster.state == ClusterState.READY, job.log
    stack = cluster.stacks.get()
    described = aws_client("cloudformation", organization=world.org_a).describe_stacks(StackName=stack.stack_id)
    given = {p["ParameterKey"]: p["ParameterValue"] for p in described["Stacks"][0]["Parameters"]}
    assert given["AlertEndpointUrl"] == "https://portal.geniac.example/api/health/alerts/sns/"
    resources = aws_client("cloudformation", organization=world.org_a).list_stack_resources(StackName=stack.stack_id)
    assert "AWS::SNS::Subscription" in {r["ResourceType"] for r in resources["StackResourceSummaries"]}
    assert "alert topic subscribed to https://portal.geniac.example/api/health/alerts/sns/" in job.log
    # The workspace holds the repository's dashboards by uid and the SigV4 data source.
    workspace = _workspace(cluster)
    assert sorted(workspace["dashboards"]) == sorted(dashboards.TITLES)
    stored = workspace["dashboards"]["geniac-gpu-health"]["dashboard"]
    assert stored["panels"] == json.loads((dashboards.DIRECTORY / "geniac-gpu-health.json").read_text())["panels"]
    source = workspace["datasources"][grafana_provision.DATASOURCE_UID]
    assert source["url"] == cluster.outputs["PrometheusEndpoint"].rstrip("/") and source["jsonData"]["sigV4Auth"]
    assert [a["name"] for a in workspace["accounts"].values()] == [grafana_provision.SERVICE_ACCOUNT]
    assert "dashboards geniac-gpu-health, geniac-efa, geniac-nodes" in job.log


@pytest.mark.django_db(transaction=True)
def test_without_a_public_https_base_url_nothing_is_subscribed_and_the_log_says_why(world, aws, settings):
    from tests.clusters.factories_clusters import run_pipeline

    settings.PORTAL_BASE_URL = "http://localhost:8000"
    cluster = _launch_observability(world)
    assert cluster.parameters["observability"]["AlertEndpointUrl"] == ""
    job = run_pipeline(cluster.jobs.get())
    stack = cluster.stacks.get()
    from portal.core.aws import client as aws_client

    resources = aws_client("cloudformation", organization=world.org_a).list_stack_resources(StackName=stack.stack_id)
    assert "AWS::SNS::Subscription" not in {r["ResourceType"] for r in resources["StackResourceSummaries"]}
    assert "alert topic has no subscription: PORTAL_BASE_URL is not an https address" in job.log


@pytest.mark.django_db(transaction=True)
def test_an_unavailable_grafana_is_retried_then_fails_the_launch_as_a_dashboards_failure(world, aws, settings):
    from clusters.choices import ClusterState
    from clusters.launches.pipeline import steps as pipeline
    from clusters.models import Cluster
    from sandbox.aws import moto_grafana

    settings.JOB_MAX_AWS_ERRORS = 3
    moto_grafana.unavailable_for(2)
    first = _launch_observability(world, "obs-retried")
    job = first.jobs.get()
    outcomes = [pipeline.step(job.pk) for _ in range(3)]
    first.refresh_from_db()
    job.refresh_from_db()
    assert outcomes == [pipeline.POLL, pipeline.POLL, pipeline.DONE] and first.state == ClusterState.READY, job.log
    assert "Grafana failed (" in job.log and "HTTP 503" in job.log and "(retrying, 2 in a row)" in job.log
    assert sorted(_workspace(first)["dashboards"]) == sorted(dashboards.TITLES)
    try:
        moto_grafana.unavailable_for(10)
        second = _launch_observability(world, "obs-failed")
        for _ in range(5):
            if pipeline.step(second.jobs.get().pk) == pipeline.DONE:
                break
    finally:
        moto_grafana.unavailable_for(0)
    second = Cluster.objects.get(pk=second.pk)
    assert second.state == ClusterState.FAILED and second.failure_reason == "dashboards"
    assert "(after 3 attempts)" in second.error_message


@pytest.mark.django_db(transaction=True)
def test_a_service_account_without_write_rights_fails_the_step_with_grafanas_refusal(world, aws):
    from clusters.choices import ClusterState
    from clusters.launches.pipeline import steps as pipeline
    from tests.clusters.factories_clusters import run_pipeline

    cluster = _launch_observability(world)
    run_pipeline(cluster.jobs.get())
    cluster.refresh_from_db()
    account = next(iter(_workspace(cluster)["accounts"].values()))
    account["grafanaRole"] = "VIEWER"  # someone in the workspace demoted the portal's account
    with pytest.raises(grafana_provision.ProvisionError, match="refused the data source .*403"):
        grafana_provision.provision_cluster(cluster)
    assert pipeline.REASONS["dashboards"]
    assert cluster.state == ClusterState.READY


def test_the_embedded_grafana_refuses_a_missing_or_expired_token(world, aws):
    from portal.core import aws as portal_aws
    from sandbox.aws import moto_grafana

    moto_grafana.register("g-0123456789", "123456789012", "ap-northeast-1")
    base = portal_aws.service_url("g-0123456789.grafana-workspace.ap-northeast-1.amazonaws.com")
    assert base == f"{aws}/_aws/g-0123456789.grafana-workspace.ap-northeast-1.amazonaws.com"
    body = json.dumps({"dashboard": {"title": "x"}}).encode()
    assert portal_aws.service_request("POST", f"{base}/api/dashboards/db", body=body).status == 401
    state = moto_grafana.workspace("g-0123456789")
    state["accounts"]["1"] = {"id": "1", "name": "geniac-portal", "grafanaRole": "ADMIN"}
    state["tokens"]["glsa_old"] = {"account": "1", "expires": 0}
    answer = portal_aws.service_request("POST", f"{base}/api/dashboards/db", body=body,
                                        headers={"Authorization": "Bearer glsa_old"})
    assert answer.status == 401 and answer.json()["message"] == "Invalid API key"


@pytest.mark.django_db(transaction=True)
def test_the_command_provisions_again_and_refuses_a_cluster_without_a_workspace(world, aws):
    from io import StringIO

    from django.core.management import CommandError, call_command

    from tests.clusters.factories_clusters import ready_cluster, run_pipeline

    cluster = _launch_observability(world)
    run_pipeline(cluster.jobs.get())
    cluster.refresh_from_db()
    out = StringIO()
    call_command("provision_dashboards", str(cluster.pk), stdout=out)
    assert out.getvalue().strip() == "data source kept; dashboards geniac-gpu-health, geniac-efa, geniac-nodes"
    assert _workspace(cluster)["dashboards"]["geniac-efa"]["meta"]["version"] == 2
    other = ready_cluster(world.org_a, name="train-1")
    with pytest.raises(CommandError, match="no ready observability stack"):
        call_command("provision_dashboards", str(other.pk))
