"""The versioned software stack every cluster node runs, and the bundle the pipeline uploads.

Each version is a directory (``clusters/software/<version>/``) with ``manifest.yaml`` (the pinned
component versions and which scripts run where, in order) and ``scripts/``. A released version is
never edited: a change is a new directory, so a cluster's recorded version and content hash always
name the scripts that ran on it, and a failing NCCL test can be matched to them.

The bundle for one cluster is the version's scripts plus two generated files: ``stack.env`` (the
pinned versions and the cluster's settings, read by every script) and, for HyperPod,
``provisioning_parameters.json`` (controller and worker groups, the FSx for Lustre DNS and mount
name). It goes to ``s3://<bucket>/geniac/<cluster name>/`` before the cluster stack is created,
because ParallelCluster's custom actions and HyperPod's ``OnCreate`` point there. A HyperPod cluster on
EKS also gets ``kubernetes/``: the version's manifests and Helm values (Lustre through its CSI driver, the
exporters, the Prometheus agent, NCCL validation as an MPIJob) rendered with the cluster's values, since
on Kubernetes these are cluster objects, not node scripts.
"""
from __future__ import annotations

import hashlib
import json
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml
from django.conf import settings

from portal.core import instance_types

SOFTWARE_DIR = Path(__file__).resolve().parent
CURRENT_VERSION = "2026.12.0"
EXPORTER_PORTS = {"NODE_EXPORTER_PORT": 9100, "EFA_EXPORTER_PORT": 9101, "DCGM_EXPORTER_PORT": 9400}
CONTROLLER_GROUP = "controller-machine"
WORKER_GROUP = "worker-group-1"


def agent_token_parameter(cluster_name: str) -> str:
    """The SSM parameter (a SecureString in the organization's account) the controller's ``install_agent.sh`` and
    the agent's unit read the cluster's token from; the portal writes it (``clusters.health.validation.agent``)."""
    return f"/geniac/{cluster_name}/agent-token"


def prefix(cluster_name: str) -> str:
    """The key prefix of a cluster's bundle in its bucket (no leading slash, trailing slash)."""
    return f"geniac/{cluster_name}/"


HYPERPOD_KINDS = ("hyperpod", "hyperpod-eks")
KUBERNETES_PREFIX = "kubernetes/"


def scripts_prefix(orchestrator: str) -> str:
    """Sub-prefix the blueprint points at: ParallelCluster custom actions, HyperPod ``SourceS3Uri``."""
    return "lifecycle/" if orchestrator in HYPERPOD_KINDS else "software/"


@dataclass(frozen=True)
class Component:
    name: str
    version: str
    source: str


@cache
def manifest(version: str = CURRENT_VERSION) -> dict:
    path = SOFTWARE_DIR / version / "manifest.yaml"
    if not path.is_file():
        raise ValueError(f"unknown software stack version {version!r}")
    data = yaml.safe_load(path.read_text())
    if data.get("version") != version:
        raise ValueError(f"{path} says version {data.get('version')!r}, its directory {version!r}")
    return data


def components(version: str = CURRENT_VERSION) -> list[Component]:
    """The pinned components, in manifest order (what the cluster page shows)."""
    return [Component(name, str(spec["version"]), spec.get("source", ""))
            for name, spec in manifest(version)["components"].items()]


def script_files(version: str = CURRENT_VERSION) -> dict[str, bytes]:
    """The version's scripts by file name."""
    manifest(version)  # an unknown version is a ValueError, not a missing directory
    directory = SOFTWARE_DIR / version / "scripts"
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


def kubernetes_files(version: str = CURRENT_VERSION) -> dict[str, bytes]:
    """The version's Kubernetes manifests and Helm values by file name (none before 2026.12.0)."""
    manifest(version)
    directory = SOFTWARE_DIR / version / "kubernetes"
    if not directory.is_dir():
        return {}
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


def content_hash(version: str = CURRENT_VERSION) -> str:
    """sha256 over the manifest, every script and every Kubernetes file (name and bytes): the identity of the stack."""
    digest = hashlib.sha256()
    digest.update((SOFTWARE_DIR / version / "manifest.yaml").read_bytes())
    for name, body in script_files(version).items():
        digest.update(name.encode() + b"\0" + body + b"\0")
    for name, body in kubernetes_files(version).items():
        digest.update(b"kubernetes/" + name.encode() + b"\0" + body + b"\0")
    return digest.hexdigest()


# The NCCL/EFA environment the reference sets for an instance family (aws-samples/awsome-distributed-training,
# 1.architectures/3.aws-batch/0.aws-batch-distributed-training-p5.yaml: P5 jobs run with these and aws-ofi-nccl's
# tuner). Other families keep NCCL's defaults (the reference's EFA cheatsheet: "leave NCCL_BUFFSIZE out").
NCCL_TUNING: dict[str, dict[str, str]] = {
    family: {"FI_EFA_FORK_SAFE": "1", "NCCL_BUFFSIZE": "8388608", "NCCL_P2P_NET_CHUNKSIZE": "524288"}
    for family in ("p5", "p5e", "p5en")
}
OFI_TUNER_FAMILIES = frozenset(NCCL_TUNING)


def nccl_environment(instance_type: str) -> tuple[dict[str, str], bool]:
    """The NCCL/EFA settings for ``instance_type`` (``ml.`` prefix allowed) and whether the tuner plugin is on."""
    family = instance_type.removeprefix("ml.").split(".", 1)[0]
    return dict(NCCL_TUNING.get(family, {})), family in OFI_TUNER_FAMILIES


def stack_env(*, cluster_name: str, region: str, remote_write_url: str = "", version: str = CURRENT_VERSION,
              instance_type: str = "", cluster_id: int | None = None, extra: Mapping[str, str] | None = None) -> str:
    """``stack.env``: shell assignments every script sources (values quoted for bash)."""
    data = manifest(version)
    values: dict[str, str] = {"SOFTWARE_VERSION": version, "CLUSTER_NAME": cluster_name, "AWS_REGION": region,
                              "AMP_REMOTE_WRITE_URL": remote_write_url,
                              "PORTAL_CLUSTER_ID": "" if cluster_id is None else str(cluster_id)}
    tuned, tuner = nccl_environment(instance_type)
    values["NCCL_TUNED_ENV"] = " ".join(f"{k}={v}" for k, v in tuned.items())
    values["NCCL_OFI_TUNER"] = "1" if tuner else "0"
    values.update({f"{name.upper()}_VERSION": str(spec["version"]) for name, spec in data["components"].items()})
    values.update({k: str(v) for k, v in EXPORTER_PORTS.items()})
    # The portal's agent on a HyperPod Slurm controller polls this address; its token is read from this parameter.
    values["PORTAL_URL"] = getattr(settings, "PORTAL_BASE_URL", "") or ""
    values["AGENT_TOKEN_PARAMETER"] = agent_token_parameter(cluster_name)
    values["HYPERPOD_CONTROLLER_SCRIPTS"] = " ".join(data["hyperpod"]["controller"])
    values["HYPERPOD_WORKER_SCRIPTS"] = " ".join(data["hyperpod"]["worker"])
    values.update(extra or {})
    lines = [f"{key}='{_shell_quote(value)}'" for key, value in values.items()]
    return "# Generated by the GENIAC portal from the software stack manifest.\n" + "\n".join(lines) + "\n"


def _shell_quote(value: str) -> str:
    return value.replace("'", "'\"'\"'")


def provisioning_parameters(*, worker_instance_type: str, fsx_dns_name: str, fsx_mount_name: str) -> dict:
    """HyperPod's ``provisioning_parameters.json``: Slurm groups and the Lustre file system to mount."""
    if not fsx_dns_name or not fsx_mount_name:
        raise ValueError("a HyperPod cluster needs the FSx for Lustre DNS name and mount name (storage stack outputs)")
    return {
        "version": "1.0.0",
        "workload_manager": "slurm",
        "controller_group": CONTROLLER_GROUP,
        "worker_groups": [{"instance_group_name": WORKER_GROUP, "partition_name": worker_instance_type}],
        "fsx_dns_name": fsx_dns_name,
        "fsx_mountname": fsx_mount_name,
    }


def bundle(orchestrator: str, inputs: Mapping[str, str], *, region: str, remote_write_url: str = "",
           version: str = CURRENT_VERSION, cluster_id: int | None = None) -> dict[str, bytes]:
    """Every object to upload for one cluster, keyed by its S3 key.

    ``inputs`` are the cluster stack's parameters as the pipeline passes them (its own and the
    earlier stacks' outputs): ``ClusterName``, the instance type (``ComputeInstanceType``, for HyperPod
    ``WorkerInstanceType``: it picks the NCCL settings), and for HyperPod ``LustreDnsName`` and
    ``LustreMountName``. ``cluster_id`` (the portal's) becomes the ``geniac_cluster_id`` label of every
    series, which maps alerts back to the cluster.
    """
    name = inputs.get("ClusterName") or ""
    if not name:
        raise ValueError("the cluster stack has no ClusterName")
    base = prefix(name) + scripts_prefix(orchestrator)
    objects = {base + file: body for file, body in script_files(version).items()}
    instance_type = inputs.get("WorkerInstanceType" if orchestrator in HYPERPOD_KINDS else "ComputeInstanceType", "")
    # The storage stack's LustreEfaEnabled output, wired into the cluster stack: configure_lustre_efa.sh reads it.
    extra = {"FSX_EFA_ENABLED": "true" if inputs.get("LustreEfaEnabled") == "true" else "false"}
    if orchestrator == "hyperpod-eks":
        extra["EKS_CLUSTER_NAME"] = f"{name}-eks"
    env = stack_env(cluster_name=name, region=region, remote_write_url=remote_write_url, version=version,
                    instance_type=instance_type or "", cluster_id=cluster_id, extra=extra).encode()
    objects[base + "stack.env"] = env
    if orchestrator == "hyperpod-eks":
        kube = prefix(name) + KUBERNETES_PREFIX
        objects.update({kube + file: body for file, body in kubernetes_objects(
            inputs, region=region, remote_write_url=remote_write_url, version=version, cluster_id=cluster_id).items()})
        objects[kube + "stack.env"] = env
    if orchestrator == "hyperpod":
        params = provisioning_parameters(worker_instance_type=inputs.get("WorkerInstanceType", ""),
                                         fsx_dns_name=inputs.get("LustreDnsName", ""),
                                         fsx_mount_name=inputs.get("LustreMountName", ""))
        objects[base + "provisioning_parameters.json"] = json.dumps(params, indent=2).encode() + b"\n"
    return objects


_PLACEHOLDER = re.compile(r"\{\{([A-Z_]+)\}\}")


def fill_placeholders(text: str, values: Mapping[str, str]) -> str:
    """Fill ``{{NAME}}`` placeholders; a placeholder without a value is an error, never left in a manifest."""
    missing = sorted({m for m in _PLACEHOLDER.findall(text) if m not in values})
    if missing:
        raise ValueError(f"no value for {', '.join(missing)}")
    return _PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), text)


def kubernetes_objects(inputs: Mapping[str, str], *, region: str, remote_write_url: str = "",
                       version: str = CURRENT_VERSION, cluster_id: int | None = None) -> dict[str, bytes]:
    """The ``kubernetes/`` files of a HyperPod EKS cluster, rendered, by file name.

    The Lustre volume needs the storage stack's file system id, DNS and mount name; the NCCL MPIJob is
    for GPU workers only (Trainium validates with nccom-test, not NCCL), sized from the instance type.
    """
    for needed in ("LustreFileSystemId", "LustreDnsName", "LustreMountName"):
        if not inputs.get(needed):
            raise ValueError("a HyperPod EKS cluster needs the FSx for Lustre file system id, DNS name and mount name "
                             f"(storage stack outputs); {needed} is missing")
    data = manifest(version)
    instance_type = inputs.get("WorkerInstanceType", "")
    node = instance_types.find(instance_type)
    workers = int(float(inputs.get("WorkerCount") or 1))
    tuned, tuner = nccl_environment(instance_type)
    nccl_env = [{"name": k, "value": v} for k, v in tuned.items()]
    if tuner:
        nccl_env.append({"name": "NCCL_TUNER_PLUGIN", "value": "/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu/libnccl-ofi-tuner.so"})
    components_ = {name: str(spec["version"]) for name, spec in data["components"].items()}
    values = {
        "AWS_REGION": region, "CLUSTER_NAME": inputs.get("ClusterName", ""),
        "PORTAL_CLUSTER_ID": "" if cluster_id is None else str(cluster_id),
        "LUSTRE_FILE_SYSTEM_ID": inputs["LustreFileSystemId"], "LUSTRE_DNS_NAME": inputs["LustreDnsName"],
        "LUSTRE_MOUNT_NAME": inputs["LustreMountName"],
        "REMOTE_WRITE_JSON": json.dumps([{"url": remote_write_url, "sigv4": {"region": region}}] if remote_write_url else []),
        "NCCL_ENV_JSON": json.dumps(nccl_env), "WORKER_COUNT": str(workers),
        "GPUS_PER_NODE": str(node.gpus if node else 0), "TOTAL_GPUS": str(workers * (node.gpus if node else 0)),
        "EFA_PER_NODE": str(node.efa_devices if node else 0),
        "NCCL_TESTS_IMAGE": f"ECR_REGISTRY/geniac/nccl-tests:{components_.get('nccl_tests', '')}-nccl{components_.get('nccl', '')}",
        **{f"{name.upper()}_VERSION": v for name, v in components_.items()},
        **{k: str(v) for k, v in EXPORTER_PORTS.items()},
    }
    files = kubernetes_files(version)
    wanted = data["hyperpod_eks"]["kubernetes"]
    out = {}
    for file in wanted:
        if file == "nccl-tests-mpijob.yaml" and not (node and node.gpus):
            continue
        out[file] = files[file] if file.endswith(".sh") else fill_placeholders(files[file].decode(), values).encode()
    counters = script_files(version)["dcgm-counters.csv"].decode()
    out["dcgm-counters-configmap.yaml"] = yaml.safe_dump({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "geniac-dcgm-counters", "namespace": "kube-system"},
        "data": {"dcgm-counters.csv": counters}}, sort_keys=False).encode()
    return out


def upload(s3, bucket: str, objects: Mapping[str, bytes]) -> None:
    """Put every object (``s3`` is a boto3 S3 client through ``portal.core.aws.client``). Idempotent."""
    for key, body in objects.items():
        s3.put_object(Bucket=bucket, Key=key, Body=body, ServerSideEncryption="AES256")


def for_cluster(cluster) -> dict | None:
    """What the cluster page shows: the stack version its nodes got (or will get) and its components."""
    kinds = ("parallelcluster", *HYPERPOD_KINDS)
    if cluster.orchestrator not in kinds or cluster.blueprint is None or cluster.blueprint.kind not in kinds:
        return None
    version = cluster.software_version or CURRENT_VERSION
    try:
        pinned = components(version)
    except ValueError:
        pinned = []
    return {"version": version, "hash": cluster.software_hash, "uploaded": bool(cluster.software_version),
            "components": pinned}


VALIDATION_JOB = "nccl_validation.sbatch"


def validation_script(version: str = CURRENT_VERSION, **values: str) -> str:
    """The version's validation job script with its ``GENIAC_*`` lines set (values shell-quoted).

    Job templates live in ``jobs/``, beside ``scripts/``: they run on a cluster when the portal asks,
    are not part of the bundle and not of the content hash. ``values`` are keyed without the prefix
    (``mode="pairwise"``, ``upload_url=...``); a key the template does not declare is an error.
    """
    manifest(version)
    text = (SOFTWARE_DIR / version / "jobs" / VALIDATION_JOB).read_text()
    for key, value in values.items():
        name = f"GENIAC_{key.upper()}"
        line = re.compile(rf"^{name}=.*$", re.MULTILINE)
        if not line.search(text):
            raise ValueError(f"{VALIDATION_JOB} of {version} declares no {name}")
        text = line.sub(lambda _m, n=name, v=value: f"{n}={shlex.quote(str(v))}", text, count=1)
    return text
