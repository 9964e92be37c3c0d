"""Provision the repository's dashboards (``clusters/blueprints/dashboards/``) into an Amazon Managed Grafana workspace.

CloudFormation has no resource for a Grafana dashboard, so the portal puts them through Grafana's HTTP API:
a short-lived service-account token from Amazon Managed Grafana (``CreateWorkspaceServiceAccountToken``, through
the organization's role), then ``POST /api/datasources`` (the workspace's Prometheus, SigV4 with the workspace's
role; an existing one is kept) and ``POST /api/dashboards/db`` for each dashboard with ``overwrite``, so the
uid the health page links to always shows the current panels. Requests go through the guarded client
(``portal/core/outbound.py``; ``portal.core.aws.service_request``, which reaches the embedded endpoint's Grafana in the
demo and tests). The launch pipeline runs :func:`provision_cluster` once an observability stack is complete;
the command ``provision_dashboards <observability cluster id>`` runs it again by hand.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from clusters.health.alerts import dashboards
from portal.core import aws, outbound

SERVICE_ACCOUNT = "geniac-portal"
DATASOURCE_UID = "geniac-amp"
TOKEN_SECONDS = 600


class ProvisionError(Exception):
    """A step failed; the message is the portal's own sentence. ``retryable``: Grafana was unreachable or
    answered 5xx, so the same request may pass later."""

    def __init__(self, message: str, retryable: bool = False):
        super().__init__(message)
        self.retryable = retryable


@dataclass
class Provisioned:
    datasource: str  # "created" or "kept"
    dashboards: list[str]


def datasource(prometheus_endpoint: str, region: str) -> dict:
    """The workspace's Prometheus as a Grafana data source, signed with the workspace's own role (SigV4)."""
    return {"name": "GENIAC Amazon Managed Prometheus", "uid": DATASOURCE_UID, "type": "prometheus",
            "access": "proxy", "url": prometheus_endpoint.rstrip("/"), "isDefault": True,
            "jsonData": {"sigV4Auth": True, "sigV4AuthType": "ec2_iam_role", "sigV4Region": region, "httpMethod": "POST"}}


def _post(url: str, token: str, body: dict) -> outbound.Answer:
    try:
        answer = aws.service_request("POST", url, body=json.dumps(body).encode(), timeout=20,
                                     headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    except outbound.OutboundError as exc:
        raise ProvisionError(f"Grafana could not be reached: {exc.reason}", retryable=True) from None
    if answer.status >= 500:
        raise ProvisionError(f"Grafana failed ({outbound.describe_status(answer.status)})", retryable=True)
    return answer


def provision(grafana_endpoint: str, token: str, *, prometheus_endpoint: str, region: str) -> Provisioned:
    """Create the data source (kept if it exists) and put every dashboard (overwriting the previous version)."""
    base = grafana_endpoint.rstrip("/")
    answer = _post(f"{base}/api/datasources", token, datasource(prometheus_endpoint, region))
    if answer.status not in (200, 409):  # 409: a data source of that name or uid exists
        raise ProvisionError(f"Grafana refused the data source ({outbound.describe_status(answer.status)})")
    source = "created" if answer.status == 200 else "kept"
    put = []
    for uid, board in dashboards.all_dashboards().items():
        answer = _post(f"{base}/api/dashboards/db", token, {
            "dashboard": board, "overwrite": True, "message": "provisioned by the GENIAC portal"})
        if answer.status != 200:
            raise ProvisionError(f"Grafana refused dashboard {uid} ({outbound.describe_status(answer.status)})")
        put.append(uid)
    return Provisioned(source, put)


MAX_PAGES = 50  # ListWorkspaceServiceAccounts pages read before giving up on a looping token


def _service_accounts(grafana_client, workspace_id: str) -> list[dict]:
    """Every service account of the workspace: the API pages them, so the portal's may be on any page."""
    found, token = [], None
    for _ in range(MAX_PAGES):
        page = grafana_client.list_workspace_service_accounts(workspaceId=workspace_id,
                                                              **({"nextToken": token} if token else {}))
        found += page.get("serviceAccounts", [])
        token = page.get("nextToken")
        if not token:
            return found
    raise ProvisionError(f"Grafana kept paging the service accounts of workspace {workspace_id}.")


def workspace_token(grafana_client, workspace_id: str) -> str:
    """A token of the portal's service account (created once, ADMIN) that lives ``TOKEN_SECONDS``."""
    account = next((a for a in _service_accounts(grafana_client, workspace_id) if a.get("name") == SERVICE_ACCOUNT),
                   None)
    if account is None:
        account = grafana_client.create_workspace_service_account(workspaceId=workspace_id, name=SERVICE_ACCOUNT,
                                                                  grafanaRole="ADMIN")
    made = grafana_client.create_workspace_service_account_token(
        workspaceId=workspace_id, serviceAccountId=account["id"], name=f"{SERVICE_ACCOUNT}-provision",
        secondsToLive=TOKEN_SECONDS)
    return made["serviceAccountToken"]["key"]


def provision_cluster(cluster) -> Provisioned:
    """Provision the dashboards into an observability cluster's workspace (its outputs name it), through the
    organization's role. Raises ``ProvisionError`` or ``portal.core.aws.AwsError``."""
    outputs = cluster.outputs or {}
    if not outputs.get("GrafanaWorkspaceId") or not outputs.get("PrometheusEndpoint"):
        raise ProvisionError(f"Cluster {cluster.pk} has no ready observability stack (GrafanaWorkspaceId).")
    try:
        client = aws.client("grafana", organization=cluster.organization, region=cluster.region)
        token = workspace_token(client, outputs["GrafanaWorkspaceId"])
    except aws.AWS_EXCEPTIONS as exc:
        raise aws.translate(exc) from exc
    return provision(aws.service_url(outputs["GrafanaEndpoint"]), token,
                     prometheus_endpoint=outputs["PrometheusEndpoint"], region=cluster.region)
