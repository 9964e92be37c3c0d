"""The repository's dashboards reach a Grafana workspace through Grafana's HTTP API (a stand-in Grafana on 127.0.0.1)."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import boto3
import pytest
from botocore.stub import Stubber

from clusters.health import dashboards, grafana_provision


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
