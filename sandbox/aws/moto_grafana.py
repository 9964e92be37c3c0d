"""Amazon Managed Grafana on the embedded endpoint: the service-account API and the workspace's HTTP API.

moto has no Grafana. A workspace the observability stack creates (``AWS::Grafana::Workspace``,
:class:`sandbox.aws.moto_resources.GrafanaWorkspace`) is registered here, and then:

- the control plane (signed for ``grafana``) answers ``ListWorkspaceServiceAccounts``,
  ``CreateWorkspaceServiceAccount`` (a name is unique in its workspace; roles ADMIN, EDITOR, VIEWER) and
  ``CreateWorkspaceServiceAccountToken`` (1 s to 30 days), for a workspace of the caller's account and region;
- the workspace's HTTP API (``<id>.grafana-workspace.<region>.amazonaws.com``) takes a token of one of its
  service accounts that has not expired (401 otherwise; 403 below EDITOR for writes) and answers
  ``POST /api/datasources`` (409 when the name or uid exists), ``GET /api/datasources/uid/<uid>``,
  ``POST /api/dashboards/db`` (a title is required; an existing uid needs ``overwrite``, else 412; each
  save raises the version) and ``GET /api/dashboards/uid/<uid>``, as Grafana does.

State is kept on moto's Managed Prometheus backend of the workspace's account and region, so moto's reset
forgets it. Loaded by :func:`sandbox.aws.moto_install.install`.
"""
from __future__ import annotations

import re
import secrets
import time
from typing import Any

from moto.amp.models import amp_backends
from werkzeug.wrappers import Request, Response

from sandbox.aws.moto_http import account_of, aws_error, aws_host, json_response, signed_service, signer

ROLES = ("ADMIN", "EDITOR", "VIEWER")
MAX_TOKEN_SECONDS = 30 * 24 * 3600
_where: dict[str, tuple[str, str]] = {}  # workspace id -> (account, region)
_unavailable = {"left": 0}


def unavailable_for(requests: int) -> None:
    """Answer the next ``requests`` calls to any workspace's HTTP API with 503, as an overloaded Grafana would."""
    _unavailable["left"] = requests


def _backend_state(account_id: str, region_name: str) -> dict[str, dict]:
    backend = amp_backends[account_id][region_name]
    if not hasattr(backend, "geniac_grafana"):
        backend.geniac_grafana = {}
    return backend.geniac_grafana


def register(workspace_id: str, account_id: str, region_name: str) -> None:
    _backend_state(account_id, region_name)[workspace_id] = {
        "accounts": {}, "tokens": {}, "datasources": {}, "dashboards": {}, "next_id": 1}
    _where[workspace_id] = (account_id, region_name)


def unregister(workspace_id: str, account_id: str, region_name: str) -> None:
    _backend_state(account_id, region_name).pop(workspace_id, None)


def workspace(workspace_id: str, account_id: str | None = None, region_name: str | None = None) -> dict | None:
    """The workspace's state (service accounts, tokens, data sources, dashboards), or None."""
    where = (account_id, region_name) if account_id else _where.get(workspace_id)
    if where is None:
        return None
    return _backend_state(*where).get(workspace_id)


def _next_id(state: dict) -> int:
    state["next_id"] += 1
    return state["next_id"] - 1


_ACCOUNTS = re.compile(r"^/workspaces/(?P<ws>[^/]+)/serviceaccounts/?$")
_TOKENS = re.compile(r"^/workspaces/(?P<ws>[^/]+)/serviceaccounts/(?P<sa>[^/]+)/tokens/?$")


@signed_service("grafana")
def control_plane(request: Request, host: str, path: str) -> Response:
    signed = signer(request)
    account, region = account_of(signed[0]), signed[1]
    match = _ACCOUNTS.match(path) or _TOKENS.match(path)
    if match is None:
        return aws_error("ValidationException", f"no Amazon Managed Grafana operation at {request.method} {path}", 400)
    state = workspace(match["ws"], account, region)
    if state is None:
        return aws_error("ResourceNotFoundException", f"Workspace {match['ws']} not found", 404)
    body = request.get_json(silent=True) or {}
    if "sa" not in match.groupdict():
        if request.method == "GET":
            return _accounts_page(request, match["ws"], state)
        name, role = str(body.get("name", "")), body.get("grafanaRole")
        if not name or role not in ROLES:
            return aws_error("ValidationException", "name and grafanaRole (ADMIN, EDITOR or VIEWER) are required", 400)
        if any(a["name"] == name for a in state["accounts"].values()):
            return aws_error("ConflictException", f"A service account named {name} exists", 409)
        made = {"id": str(_next_id(state)), "name": name, "grafanaRole": role}
        state["accounts"][made["id"]] = made
        return json_response({**made, "workspaceId": match["ws"]})
    service_account = state["accounts"].get(match["sa"])
    if service_account is None:
        return aws_error("ResourceNotFoundException", f"Service account {match['sa']} not found", 404)
    seconds = body.get("secondsToLive")
    if not isinstance(seconds, int) or not 1 <= seconds <= MAX_TOKEN_SECONDS or not body.get("name"):
        return aws_error("ValidationException", f"name and secondsToLive (1 to {MAX_TOKEN_SECONDS}) are required", 400)
    key = "glsa_" + secrets.token_urlsafe(24)
    token_id = str(_next_id(state))
    state["tokens"][key] = {"account": service_account["id"], "expires": time.time() + seconds}
    return json_response({"serviceAccountId": service_account["id"], "workspaceId": match["ws"],
                          "serviceAccountToken": {"id": token_id, "name": body["name"], "key": key}})


PAGE_SIZE = 10  # service accounts per ListWorkspaceServiceAccounts page when the request names no maxResults


def _accounts_page(request: Request, workspace_id: str, state: dict) -> Response:
    """One page of the workspace's service accounts; ``nextToken`` while more follow (the API pages them)."""
    size = int(request.args.get("maxResults") or PAGE_SIZE)
    start = int(request.args.get("nextToken") or 0) if (request.args.get("nextToken") or "0").isdigit() else -1
    if start < 0:
        return aws_error("ValidationException", "The nextToken is not valid.", 400)
    accounts = list(state["accounts"].values())
    page = [{"id": a["id"], "name": a["name"], "grafanaRole": a["grafanaRole"], "isDisabled": "false"}
            for a in accounts[start:start + size]]
    more = {"nextToken": str(start + size)} if start + size < len(accounts) else {}
    return json_response({"workspaceId": workspace_id, "serviceAccounts": page, **more})


def _caller_role(request: Request, state: dict) -> str | None:
    auth = request.headers.get("Authorization", "")
    token = state["tokens"].get(auth[len("Bearer "):]) if auth.startswith("Bearer ") else None
    if token is None or token["expires"] < time.time():
        return None
    return state["accounts"][token["account"]]["grafanaRole"]


def _message(text: str, status: int) -> Response:
    return json_response({"message": text}, status)


@aws_host(r"g-[0-9a-f]+\.grafana-workspace\.[a-z0-9-]+\.amazonaws\.com")
def workspace_api(request: Request, host: str, path: str) -> Response:
    if _unavailable["left"] > 0:
        _unavailable["left"] -= 1
        return _message("Service Unavailable", 503)
    state = workspace(host.split(".", 1)[0])
    if state is None:
        return _message("Not found", 404)
    role = _caller_role(request, state)
    if role is None:
        return _message("Invalid API key", 401)
    writes = request.method in ("POST", "PUT", "DELETE")
    if writes and role == "VIEWER":
        return _message("Permission denied", 403)
    body: Any = request.get_json(silent=True) if writes else None
    if writes and not isinstance(body, dict):
        return _message("bad request data", 400)
    if path == "/api/datasources" and request.method == "POST":
        return _add_datasource(state, body)
    if path.startswith("/api/datasources/uid/") and request.method == "GET":
        found = state["datasources"].get(path.rsplit("/", 1)[-1])
        return json_response(found) if found else _message("Data source not found", 404)
    if path == "/api/dashboards/db" and request.method == "POST":
        return _save_dashboard(state, body)
    if path.startswith("/api/dashboards/uid/") and request.method == "GET":
        found = state["dashboards"].get(path.rsplit("/", 1)[-1])
        return json_response(found) if found else _message("Dashboard not found", 404)
    return _message("Not found", 404)


def _add_datasource(state: dict, body: dict) -> Response:
    if not body.get("name") or not body.get("type"):
        return _message("name and type are required", 400)
    for existing in state["datasources"].values():
        if existing["name"] == body["name"] or (body.get("uid") and existing["uid"] == body["uid"]):
            return _message("data source with the same name already exists", 409)
    source = {**body, "id": _next_id(state), "uid": body.get("uid") or secrets.token_hex(7)}
    state["datasources"][source["uid"]] = source
    return json_response({"datasource": source, "id": source["id"], "message": "Datasource added",
                          "name": source["name"]})


def _save_dashboard(state: dict, body: dict) -> Response:
    board = body.get("dashboard")
    if not isinstance(board, dict) or not board.get("title"):
        return _message("Dashboard title cannot be empty", 400)
    uid = board.get("uid") or secrets.token_hex(7)
    existing = state["dashboards"].get(uid)
    if existing is not None and not body.get("overwrite"):
        return json_response({"message": "A dashboard with the same uid already exists", "status": "name-exists"}, 412)
    version = existing["meta"]["version"] + 1 if existing else 1
    slug = re.sub(r"[^a-z0-9]+", "-", board["title"].lower()).strip("-")
    url = f"/d/{uid}/{slug}"
    dashboard_id = existing["dashboard"]["id"] if existing else _next_id(state)
    state["dashboards"][uid] = {"dashboard": {**board, "uid": uid, "id": dashboard_id, "version": version},
                                "meta": {"url": url, "slug": slug, "version": version,
                                         "message": str(body.get("message", ""))}}
    return json_response({"id": dashboard_id, "uid": uid, "url": url, "status": "success", "version": version,
                          "slug": slug})
