"""The versioned software stack every cluster node runs, and the bundle the pipeline uploads.

Each version is a directory (``clusters/software/<version>/``) with ``manifest.yaml`` (the pinned
component versions and which scripts run where, in order) and ``scripts/``. A released version is
never edited: a change is a new directory, so a cluster's recorded version and content hash always
name the scripts that ran on it, and a failing NCCL test can be matched to them.

The bundle for one cluster is the version's scripts plus two generated files: ``stack.env`` (the
pinned versions and the cluster's settings, read by every script) and, for HyperPod,
``provisioning_parameters.json`` (controller and worker groups, the FSx for Lustre DNS and mount
name). It goes to ``s3://<bucket>/geniac/<cluster name>/`` before the cluster stack is created,
because ParallelCluster's custom actions and HyperPod's ``OnCreate`` point there.
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

SOFTWARE_DIR = Path(__file__).resolve().parent
CURRENT_VERSION = "2026.12.0"
EXPORTER_PORTS = {"NODE_EXPORTER_PORT": 9100, "EFA_EXPORTER_PORT": 9101, "DCGM_EXPORTER_PORT": 9400}
CONTROLLER_GROUP = "controller-machine"
WORKER_GROUP = "worker-group-1"


def prefix(cluster_name: str) -> str:
    """The key prefix of a cluster's bundle in its bucket (no leading slash, trailing slash)."""
    return f"geniac/{cluster_name}/"


def scripts_prefix(orchestrator: str) -> str:
    """Sub-prefix the blueprint points at: ParallelCluster custom actions, HyperPod ``SourceS3Uri``."""
    return "lifecycle/" if orchestrator == "hyperpod" else "software/"


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


def content_hash(version: str = CURRENT_VERSION) -> str:
    """sha256 over the manifest and every script (name and bytes): the identity of the stack."""
    digest = hashlib.sha256()
    digest.update((SOFTWARE_DIR / version / "manifest.yaml").read_bytes())
    for name, body in script_files(version).items():
        digest.update(name.encode() + b"\0" + body + b"\0")
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
              instance_type: str = "", cluster_id: int | None = None) -> str:
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
    values["HYPERPOD_CONTROLLER_SCRIPTS"] = " ".join(data["hyperpod"]["controller"])
    values["HYPERPOD_WORKER_SCRIPTS"] = " ".join(data["hyperpod"]["worker"])
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
    instance_type = inputs.get("WorkerInstanceType" if orchestrator == "hyperpod" else "ComputeInstanceType", "")
    objects[base + "stack.env"] = stack_env(cluster_name=name, region=region, remote_write_url=remote_write_url,
                                            version=version, instance_type=instance_type or "",
                                            cluster_id=cluster_id).encode()
    if orchestrator == "hyperpod":
        params = provisioning_parameters(worker_instance_type=inputs.get("WorkerInstanceType", ""),
                                         fsx_dns_name=inputs.get("LustreDnsName", ""),
                                         fsx_mount_name=inputs.get("LustreMountName", ""))
        objects[base + "provisioning_parameters.json"] = json.dumps(params, indent=2).encode() + b"\n"
    return objects


def upload(s3, bucket: str, objects: Mapping[str, bytes]) -> None:
    """Put every object (``s3`` is a boto3 S3 client through ``portal.aws.client``). Idempotent."""
    for key, body in objects.items():
        s3.put_object(Bucket=bucket, Key=key, Body=body, ServerSideEncryption="AES256")


def for_cluster(cluster) -> dict | None:
    """What the cluster page shows: the stack version its nodes got (or will get) and its components."""
    if cluster.orchestrator not in ("parallelcluster", "hyperpod") or cluster.blueprint is None \
            or cluster.blueprint.kind not in ("parallelcluster", "hyperpod"):
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
