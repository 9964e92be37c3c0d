"""Apply the software stack's manifests to a HyperPod EKS cluster through its Kubernetes API.

The portal acts as the identity that created the EKS cluster (the organization's role, which has the
cluster admin access entry: ``BootstrapClusterCreatorAdminPermissions``), with the token EKS's authenticator
takes: ``k8s-aws-v1.`` and the base64url of an STS ``GetCallerIdentity`` URL presigned for 60 seconds with
the ``x-k8s-aws-id: <cluster name>`` header signed, as ``aws eks get-token`` makes it. The API server is the
cluster's endpoint (``DescribeCluster``), verified against the cluster's own certificate authority.

Objects are put with server-side apply (``PATCH …?fieldManager=geniac-portal`` with
``application/apply-patch+yaml``): created or brought to the manifest, so a repeated step changes nothing
and an operator's ``kubectl apply`` of the same files afterwards agrees. The manifests are read back from
the cluster's bucket (``geniac/<cluster>/kubernetes/``), where the upload step put them: the cluster gets
exactly the files an operator sees there.
"""
from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass

import yaml

from clusters.models import Cluster
from clusters.software import release
from portal.core import aws, json_input, outbound

FIELD_MANAGER = "geniac-portal"
# The stack's plain manifests, applied in this order. The Helm values files and the MPIJob are not here
# (docs/blueprints.md: apply.sh installs the charts; the MPIJob is run by an operator when validating).
APPLIED_FILES = ("fsx-lustre.yaml", "dcgm-counters-configmap.yaml", "efa-exporter.yaml")
# (apiVersion, kind) -> (plural, namespaced)
KINDS = {
    ("v1", "Namespace"): ("namespaces", False),
    ("v1", "ConfigMap"): ("configmaps", True),
    ("v1", "Service"): ("services", True),
    ("v1", "ServiceAccount"): ("serviceaccounts", True),
    ("v1", "PersistentVolume"): ("persistentvolumes", False),
    ("v1", "PersistentVolumeClaim"): ("persistentvolumeclaims", True),
    ("storage.k8s.io/v1", "StorageClass"): ("storageclasses", False),
    ("apps/v1", "DaemonSet"): ("daemonsets", True),
    ("apps/v1", "Deployment"): ("deployments", True),
}
TOKEN_SECONDS = 60


class KubernetesError(Exception):
    """The API server refused (``retryable`` False) or could not be reached or failed (True)."""

    def __init__(self, message: str, retryable: bool = False):
        super().__init__(message)
        self.retryable = retryable


def object_path(obj: dict) -> str:
    """The API path of one object (``/api/v1/namespaces/kube-system/configmaps/x``)."""
    key = (obj.get("apiVersion"), obj.get("kind"))
    if key not in KINDS:
        raise KubernetesError(f"{key[0]}/{key[1]} is not a kind the portal applies")
    plural, namespaced = KINDS[key]
    base = "/api/v1" if key[0] == "v1" else f"/apis/{key[0]}"
    name = obj["metadata"]["name"]
    if namespaced:
        return f"{base}/namespaces/{obj['metadata'].get('namespace', 'default')}/{plural}/{name}"
    return f"{base}/{plural}/{name}"


def token(sts_client, eks_cluster_name: str) -> str:
    """An EKS bearer token for ``sts_client``'s identity (``aws eks get-token``'s)."""
    def add_cluster_header(request, **_kwargs):
        request.headers["x-k8s-aws-id"] = eks_cluster_name

    sts_client.meta.events.register("before-sign.sts.GetCallerIdentity", add_cluster_header)
    url = sts_client.generate_presigned_url("get_caller_identity", Params={}, ExpiresIn=TOKEN_SECONDS,
                                            HttpMethod="GET")
    return "k8s-aws-v1." + base64.urlsafe_b64encode(url.encode()).decode().rstrip("=")


@dataclass
class Api:
    base: str
    token: str
    ca_data: str | None = None

    def request(self, method: str, path: str, body: bytes | None = None, content_type: str = "") -> tuple[int, dict]:
        headers = {"Authorization": f"Bearer {self.token}", "Accept": "application/json"}
        if content_type:
            headers["Content-Type"] = content_type
        try:
            answer = aws.service_request(method, self.base + path, body=body, headers=headers, ca_data=self.ca_data)
        except outbound.OutboundError as exc:
            raise KubernetesError(f"The EKS API server could not be reached: {exc.reason}", retryable=True) from None
        try:
            data = json_input.loads(answer.body) if answer.body else {}
        except ValueError:
            data = {"message": answer.body[:200].decode(errors="replace")}
        return answer.status, data

    def apply(self, obj: dict) -> str:
        """Server-side apply one object; ``"created"`` or ``"configured"``."""
        path = object_path(obj)
        status, data = self.request("PATCH", f"{path}?fieldManager={FIELD_MANAGER}&force=true",
                                    body=json.dumps(obj).encode(), content_type="application/apply-patch+yaml")
        what = f"{obj['kind']} {obj['metadata']['name']}"
        if status in (200, 201):
            return "created" if status == 201 else "configured"
        message = data.get("message") or f"HTTP {status}"
        if status >= 500 or status == 429:
            raise KubernetesError(f"The EKS API server could not take {what} (HTTP {status}: {message})",
                                  retryable=True)
        raise KubernetesError(f"The EKS API server refused {what}: {message}")

    def get(self, path: str) -> dict | None:
        status, data = self.request("GET", path)
        if status == 404:
            return None
        if status != 200:
            raise KubernetesError(f"The EKS API server answered {status} for {path}: {data.get('message', '')}",
                                  retryable=status >= 500 or status == 429)
        return data


def connect(cluster: Cluster) -> Api:
    """The API of the cluster's EKS cluster, as the organization's role."""
    name = (cluster.outputs or {}).get("EksClusterName")
    if not name:
        raise KubernetesError("The cluster stack has no EksClusterName output.")
    try:
        eks = aws.client("eks", organization=cluster.organization, region=cluster.region)
        described = eks.describe_cluster(name=name)["cluster"]
        sts = aws.client("sts", organization=cluster.organization, region=cluster.region)
        bearer = token(sts, name)
    except aws.AWS_EXCEPTIONS as exc:
        raise aws.translate(exc) from exc
    if described.get("status") != "ACTIVE" or not described.get("endpoint"):
        raise KubernetesError(f"EKS cluster {name} is {described.get('status')}, not active", retryable=True)
    try:
        ca = base64.b64decode(described.get("certificateAuthority", {}).get("data", ""), validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        ca = None  # verified against the public authorities instead, which a real EKS endpoint fails: closed
    return Api(aws.service_url(described["endpoint"]), bearer, ca)


def manifests(cluster: Cluster) -> list[dict]:
    """The objects of ``APPLIED_FILES``, as uploaded to the cluster's bucket, in order."""
    bucket = (cluster.outputs or {}).get("BucketName")
    name = (cluster.parameters.get("cluster") or {}).get("ClusterName") or cluster.name
    if not bucket:
        raise KubernetesError("The cluster has no BucketName: the manifests were never uploaded.")
    s3 = aws.client("s3", organization=cluster.organization, region=cluster.region)
    objects = []
    for file in APPLIED_FILES:
        key = f"{release.prefix(name)}{release.KUBERNETES_PREFIX}{file}"
        try:
            body = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
        except aws.AWS_EXCEPTIONS as exc:
            raise aws.translate(exc) from exc
        objects.extend(doc for doc in yaml.safe_load_all(body) if doc)
    return objects


def install_stack(cluster: Cluster) -> list[str]:
    """Apply the stack's manifests; ``["StorageClass/fsx-lustre (created)", …]``."""
    api = connect(cluster)
    return [f"{obj['kind']}/{obj['metadata']['name']} ({api.apply(obj)})" for obj in manifests(cluster)]
