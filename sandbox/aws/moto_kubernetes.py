"""The Kubernetes API server of an EKS cluster, on the embedded endpoint, for the kinds the portal applies.

moto's EKS has clusters but no API server behind their endpoint. Each cluster the blueprint creates
(:class:`sandbox.aws.moto_eks.EksCluster`) gets an endpoint host of its own, and requests to
``/_aws/<that host>/…`` are answered here as an API server would:

- authentication: a bearer token ``k8s-aws-v1.<base64url of a presigned STS GetCallerIdentity URL>`` whose
  signed headers include ``x-k8s-aws-id`` and whose signature has not expired (``X-Amz-Date`` plus
  ``X-Amz-Expires``, at most 15 minutes), from an access key of the cluster's account, as EKS's
  authenticator checks (the signature itself is not verified: moto does not check signatures either;
  the creator's admin access entry is assumed, ``BootstrapClusterCreatorAdminPermissions``); 401 otherwise;
- resources: namespaces, config maps, services, service accounts, persistent volumes and claims, storage
  classes, daemon sets and deployments (``RESOURCES``); any other group or kind is 404, as for a custom
  resource whose definition is not installed (``kubeflow.org`` MPIJobs come with HyperPod's dependency chart);
- server-side apply (``PATCH`` with ``application/apply-patch+yaml`` and a ``fieldManager``) creates (201) or
  replaces (200) an object after the checks the API server makes: kind and version match the path, the name
  matches, the namespace exists, and the kind's required fields (``_checks``: a volume has one source and a
  CSI source a driver and handle, a claim asks for storage, a workload's selector matches its pod labels and
  each container has a name and an image); 422 with the causes otherwise. ``GET`` reads an object or a
  list, ``DELETE`` removes one.

Objects live on moto's EKS cluster object, so moto's reset forgets them. Loaded by
:func:`sandbox.aws.moto_install.install`.
"""
from __future__ import annotations

import base64
import binascii
import datetime
import re
import uuid
from typing import Any
from urllib.parse import parse_qs, urlsplit

import yaml
from moto.eks.models import eks_backends
from werkzeug.wrappers import Request, Response

from sandbox.aws.moto_http import account_of, aws_host, json_response

# (group/version, plural) -> (kind, namespaced)
RESOURCES: dict[tuple[str, str], tuple[str, bool]] = {
    ("v1", "namespaces"): ("Namespace", False),
    ("v1", "configmaps"): ("ConfigMap", True),
    ("v1", "services"): ("Service", True),
    ("v1", "serviceaccounts"): ("ServiceAccount", True),
    ("v1", "persistentvolumes"): ("PersistentVolume", False),
    ("v1", "persistentvolumeclaims"): ("PersistentVolumeClaim", True),
    ("storage.k8s.io/v1", "storageclasses"): ("StorageClass", False),
    ("apps/v1", "daemonsets"): ("DaemonSet", True),
    ("apps/v1", "deployments"): ("Deployment", True),
}
INITIAL_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
MAX_TOKEN_SECONDS = 900
_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_CORE = re.compile(r"^/api/v1/(?:namespaces/(?P<ns>[^/]+)/)?(?P<plural>[a-z]+)(?:/(?P<name>[^/]+))?/?$")
_GROUP = re.compile(r"^/apis/(?P<group>[^/]+)/(?P<version>[^/]+)/(?:namespaces/(?P<ns>[^/]+)/)?"
                    r"(?P<plural>[a-z]+)(?:/(?P<name>[^/]+))?/?$")
_where: dict[str, tuple[str, str, str]] = {}  # endpoint host -> (account, region, cluster name)
_unavailable = {"left": 0}


def unavailable_for(requests: int) -> None:
    """Answer the next ``requests`` calls to any API server with 503, as an API server under load would."""
    _unavailable["left"] = requests


def endpoint_for(name: str, account_id: str, region_name: str) -> str:
    """A new API server endpoint for an EKS cluster (AWS gives each cluster its own host)."""
    host = f"{uuid.uuid4().hex.upper()}.gr7.{region_name}.eks.amazonaws.com"
    _where[host] = (account_id, region_name, name)
    return f"https://{host}"


def objects_of(cluster: Any) -> dict[tuple[str, str, str, str], dict]:
    """The cluster's objects by (group/version, plural, namespace, name); the initial namespaces exist."""
    if not hasattr(cluster, "geniac_objects"):
        cluster.geniac_objects = {}
        for namespace in INITIAL_NAMESPACES:
            _store(cluster, "v1", "namespaces", "", {"apiVersion": "v1", "kind": "Namespace",
                                                      "metadata": {"name": namespace}}, "eks")
    return cluster.geniac_objects


def _cluster(host: str) -> Any | None:
    where = _where.get(host)
    if where is None:
        return None
    account, region, name = where
    cluster = eks_backends[account][region].clusters.get(name)
    return cluster if cluster is not None and cluster.endpoint == f"https://{host}" else None


def status(code: int, reason: str, message: str, causes: list[dict] | None = None) -> Response:
    body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": reason, "code": code}
    if causes:
        body["details"] = {"causes": causes}
    return json_response(body, code)


def token_account(header: str) -> str | None:
    """The account whose key presigned the token's STS URL, if the token is one EKS would accept."""
    if not header.startswith("Bearer k8s-aws-v1."):
        return None
    encoded = header[len("Bearer k8s-aws-v1."):]
    try:
        url = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None
    query = {k.lower(): v[0] for k, v in parse_qs(urlsplit(url).query).items()}
    if query.get("action") != "GetCallerIdentity" or not query.get("x-amz-signature"):
        return None
    if "x-k8s-aws-id" not in query.get("x-amz-signedheaders", "").split(";"):
        return None
    try:
        signed = datetime.datetime.strptime(query["x-amz-date"], "%Y%m%dT%H%M%SZ").replace(tzinfo=datetime.UTC)
        lifetime = int(query["x-amz-expires"])
    except (KeyError, ValueError):
        return None
    now = datetime.datetime.now(datetime.UTC)
    if lifetime > MAX_TOKEN_SECONDS or now > signed + datetime.timedelta(seconds=lifetime):
        return None
    credential = query.get("x-amz-credential", "")
    return account_of(credential.split("/", 1)[0]) if credential else None


@aws_host(r"[0-9A-F]{32}\.gr7\.[a-z0-9-]+\.eks\.amazonaws\.com")
def api_server(request: Request, host: str, path: str) -> Response:
    if _unavailable["left"] > 0:
        _unavailable["left"] -= 1
        return status(503, "ServiceUnavailable", "the server is currently unable to handle the request")
    cluster = _cluster(host)
    if cluster is None:
        return status(404, "NotFound", "no such EKS cluster endpoint")
    if token_account(request.headers.get("Authorization", "")) != _where[host][0]:
        return status(401, "Unauthorized", "Unauthorized")
    match = _CORE.match(path) or _GROUP.match(path)
    if match is None:
        return status(404, "NotFound", "the server could not find the requested resource")
    parts = match.groupdict()
    group_version = f"{parts['group']}/{parts['version']}" if parts.get("group") else "v1"
    resource = RESOURCES.get((group_version, parts["plural"]))
    if resource is None:
        return status(404, "NotFound", "the server could not find the requested resource")
    kind, namespaced = resource
    namespace = parts["ns"] or ""
    if namespaced != bool(namespace) and not (namespaced and request.method == "GET" and not parts["name"]):
        return status(404, "NotFound", "the server could not find the requested resource")
    objects = objects_of(cluster)
    name = parts["name"]
    key = (group_version, parts["plural"], namespace, name or "")
    if request.method == "GET":
        if name:
            found = objects.get(key)
            return json_response(found) if found else status(404, "NotFound", f'{parts["plural"]} "{name}" not found')
        items = [o for (gv, pl, ns, _), o in sorted(objects.items())
                 if (gv, pl) == (group_version, parts["plural"]) and (not namespace or ns == namespace)]
        return json_response({"apiVersion": group_version, "kind": f"{kind}List", "metadata": {}, "items": items})
    if request.method == "DELETE" and name:
        if objects.pop(key, None) is None:
            return status(404, "NotFound", f'{parts["plural"]} "{name}" not found')
        return json_response({"kind": "Status", "apiVersion": "v1", "status": "Success", "code": 200})
    if request.method == "PATCH" and name:
        return _apply(request, cluster, objects, key, kind, namespaced)
    return status(405, "MethodNotAllowed", f"{request.method} is not supported here")


def _apply(request: Request, cluster: Any, objects: dict, key: tuple, kind: str, namespaced: bool) -> Response:
    group_version, plural, namespace, name = key
    if request.mimetype != "application/apply-patch+yaml":
        return status(415, "UnsupportedMediaType", f"the body of the request was in an unknown format - {request.mimetype}")
    manager = request.args.get("fieldManager", "")
    if not manager:
        return status(422, "Invalid", 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: '
                                      "is required for apply patch")
    try:
        body = yaml.safe_load(request.get_data(as_text=True))
    except yaml.YAMLError as exc:
        return status(400, "BadRequest", f"error decoding YAML: {exc}")
    if not isinstance(body, dict):
        return status(400, "BadRequest", "the body is not an object")
    meta = body.get("metadata") or {}
    if body.get("apiVersion") != group_version or body.get("kind") != kind:
        return status(400, "BadRequest", f"the body is {body.get('apiVersion')}/{body.get('kind')}, "
                                         f"the path {group_version}/{kind}")
    if meta.get("name") != name:
        return status(400, "BadRequest", "the name of the object does not match the name on the URL")
    if namespaced and meta.get("namespace", namespace) != namespace:
        return status(400, "BadRequest", "the namespace of the object does not match the namespace on the URL")
    if namespaced and ("v1", "namespaces", "", namespace) not in objects:
        return status(404, "NotFound", f'namespaces "{namespace}" not found')
    causes = _checks(kind, body)
    if not _NAME.fullmatch(name) or len(name) > 253 or (kind == "Namespace" and not _LABEL.fullmatch(name)):
        causes.insert(0, {"field": "metadata.name", "message": "a lowercase RFC 1123 subdomain must consist of "
                                                             "lower case alphanumeric characters, '-' or '.'"})
    if causes:
        text = "; ".join(f"{c['field']}: {c['message']}" for c in causes)
        return status(422, "Invalid", f'{kind} "{name}" is invalid: {text}', causes)
    created = key not in objects
    stored = _store(cluster, group_version, plural, namespace, body, manager, previous=objects.get(key))
    return json_response(stored, 201 if created else 200)


def _store(cluster: Any, group_version: str, plural: str, namespace: str, body: dict, manager: str,
           previous: dict | None = None) -> dict:
    objects = cluster.geniac_objects
    version = getattr(cluster, "geniac_resource_version", 0) + 1
    cluster.geniac_resource_version = version
    meta = dict(body.get("metadata") or {})
    if namespace:
        meta["namespace"] = namespace
    old = (previous or {}).get("metadata", {})
    meta.update(uid=old.get("uid") or str(uuid.uuid4()), resourceVersion=str(version),
                creationTimestamp=old.get("creationTimestamp")
                or datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                managedFields=[{"manager": manager, "operation": "Apply", "apiVersion": group_version}])
    stored = {**body, "metadata": meta}
    objects[(group_version, plural, namespace, meta["name"])] = stored
    return stored


def _need(causes: list[dict], value: Any, field: str, message: str = "Required value") -> None:
    if value in (None, "", [], {}):
        causes.append({"field": field, "message": message})


def _checks(kind: str, body: dict) -> list[dict]:
    """What the API server's validation refuses, for the kinds above (the fields the portal's manifests use)."""
    causes: list[dict] = []
    spec = body.get("spec") or {}
    if kind == "StorageClass":
        _need(causes, body.get("provisioner"), "provisioner")
    elif kind == "PersistentVolume":
        _need(causes, (spec.get("capacity") or {}).get("storage"), "spec.capacity.storage")
        _need(causes, spec.get("accessModes"), "spec.accessModes")
        sources = [k for k in ("csi", "hostPath", "nfs", "local", "awsElasticBlockStore") if spec.get(k)]
        if len(sources) != 1:
            causes.append({"field": "spec", "message": "must specify exactly one volume source"})
        if spec.get("csi"):
            _need(causes, spec["csi"].get("driver"), "spec.csi.driver")
            _need(causes, spec["csi"].get("volumeHandle"), "spec.csi.volumeHandle")
    elif kind == "PersistentVolumeClaim":
        _need(causes, spec.get("accessModes"), "spec.accessModes")
        _need(causes, ((spec.get("resources") or {}).get("requests") or {}).get("storage"),
              "spec.resources.requests.storage")
    elif kind == "ConfigMap":
        for key, value in (body.get("data") or {}).items():
            if not isinstance(value, str):
                causes.append({"field": f"data[{key}]", "message": "must be a string"})
    elif kind in ("DaemonSet", "Deployment"):
        selector = (spec.get("selector") or {}).get("matchLabels") or {}
        template = spec.get("template") or {}
        labels = (template.get("metadata") or {}).get("labels") or {}
        _need(causes, selector, "spec.selector")
        if selector and any(labels.get(k) != v for k, v in selector.items()):
            causes.append({"field": "spec.template.metadata.labels", "message": "`selector` does not match "
                                                                                "template `labels`"})
        containers = (template.get("spec") or {}).get("containers") or []
        _need(causes, containers, "spec.template.spec.containers")
        for i, container in enumerate(containers):
            _need(causes, container.get("name"), f"spec.template.spec.containers[{i}].name")
            _need(causes, container.get("image"), f"spec.template.spec.containers[{i}].image")
            for port in container.get("ports") or []:
                if not isinstance(port.get("containerPort"), int) or not 0 < port["containerPort"] < 65536:
                    causes.append({"field": f"spec.template.spec.containers[{i}].ports.containerPort",
                                   "message": "must be between 1 and 65535, inclusive"})
    return causes
