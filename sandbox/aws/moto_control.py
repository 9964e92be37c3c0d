"""The embedded endpoint's side of :mod:`sandbox.aws.control`: records a reservation as AWS would hold it, where a
ParallelCluster's node exporters push, starts a HyperPod Slurm controller's agent (:mod:`sandbox.aws.moto_agent`), and
degrades a node's link (:func:`sandbox.aws.moto_sbatch.seed_slow_link`).

``POST /_aws/control.embedded/reservations`` with the JSON :func:`sandbox.aws.control.register_reservation`
sends: an ODCR or a Capacity Block in :mod:`sandbox.aws.moto_ec2`'s store, a training plan in
:mod:`sandbox.aws.moto_training_plans`'s, each with its instances in use. Importing the module registers it."""
from __future__ import annotations

import json

from werkzeug.wrappers import Request, Response

from sandbox.aws import moto_agent, moto_ec2, moto_headnode, moto_sbatch, moto_scontrol, moto_training_plans
from sandbox.aws.control import HOST
from sandbox.aws.moto_http import aws_error, aws_host, json_response


@aws_host(HOST.replace(".", r"\."))
def control(request: Request, host: str, path: str) -> Response:
    if request.method == "POST" and path.rstrip("/") == "/exporters":
        return _exporters(request)
    if request.method == "POST" and path.rstrip("/") == "/agents":
        return _agent(request)
    if request.method == "POST" and path.rstrip("/") == "/links":
        return _link(request)
    if request.method != "POST" or path.rstrip("/") != "/reservations":
        return aws_error("NotFound", f"the embedded endpoint's control does not answer {request.method} {path}", 404)
    try:
        spec = json.loads(request.get_data() or b"{}")
        account, region, rid = spec["account_id"], spec["region"], spec["reservation_id"]
        count, in_use = int(spec["count"]), int(spec["in_use"])
        if not 0 <= in_use <= count:
            raise ValueError(f"in_use {in_use} is not within 0..{count}")
        if spec["kind"] == "training_plan":
            moto_training_plans.add_training_plan(account, region, name=rid.rsplit("/", 1)[-1],
                                                  instance_type=spec["instance_type"], count=count,
                                                  days=int(spec.get("days") or 30), in_use=in_use)
        else:
            moto_ec2._record(account, region, instance_type=spec["instance_type"],
                             availability_zone=spec["availability_zone"], count=count, reservation_id=rid,
                             reservation_type="capacity-block" if spec["kind"] == "capacity_block" else "default")
            moto_ec2.set_reservation_usage(account, region, rid, in_use)
    except (KeyError, TypeError, ValueError) as exc:
        return aws_error("ValidationException", f"not a reservation: {exc}", 400)
    return json_response({"reservation_id": rid, "in_use": in_use})


def _exporters(request: Request) -> Response:
    """The node exporters of the ParallelCluster whose head node is ``head_node`` push to ``url`` with ``token``."""
    try:
        spec = json.loads(request.get_data() or b"{}")
        cluster = moto_headnode.cluster_of(spec["account_id"], spec["region"], spec["head_node"])
        if cluster is None:
            raise ValueError(f"no cluster has the head node {spec['head_node']}")
        moto_scontrol.configure_exporters(cluster, str(spec["url"]), str(spec["token"]))
    except (KeyError, TypeError, ValueError) as exc:
        return aws_error("ValidationException", f"not an exporter configuration: {exc}", 400)
    return json_response({"cluster": cluster.name})


def _agent(request: Request) -> Response:
    """Start the agent of the HyperPod cluster ``cluster_name``, polling the portal at ``url`` with ``token``."""
    try:
        spec = json.loads(request.get_data() or b"{}")
        account, region, name = str(spec["account_id"]), str(spec["region"]), str(spec["cluster_name"])
        if moto_headnode.cluster_of(account, region, f"sagemaker-cluster:{name}_{moto_agent.CONTROLLER}") is None:
            raise ValueError(f"no HyperPod cluster {name}")
        moto_agent.start(account, region, name, url=str(spec["url"]), cluster_id=int(spec["cluster_id"]),
                         token=str(spec["token"]), wait=float(spec.get("wait") or 5))
    except (KeyError, TypeError, ValueError) as exc:
        return aws_error("ValidationException", f"not an agent configuration: {exc}", 400)
    return json_response({"cluster": name, "running": True})


def _link(request: Request) -> Response:
    """Degrade one node's link (``factor`` of the healthy bandwidth) in the cluster whose head node, or HyperPod
    cluster, ``target`` names."""
    try:
        spec = json.loads(request.get_data() or b"{}")
        cluster = moto_headnode.cluster_of(str(spec["account_id"]), str(spec["region"]), str(spec["target"]))
        if cluster is None:
            raise ValueError(f"no cluster at {spec['target']}")
        moto_sbatch.seed_slow_link(cluster, str(spec["hostname"]), float(spec.get("factor") or moto_sbatch.SLOW_FACTOR))
    except (KeyError, TypeError, ValueError) as exc:
        return aws_error("ValidationException", f"not a link: {exc}", 400)
    return json_response({"cluster": cluster.name, "hostname": spec["hostname"]})
