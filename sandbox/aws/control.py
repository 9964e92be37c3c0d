"""Telling the embedded endpoint, from another process, what AWS already holds for an account (no moto here: the
demo imports it).

Some things are not made through an AWS API: a Capacity Block or a training plan is bought from an offering, an
ODCR's id is AWS's, and how many instances run in a reservation is AWS's count. The demo's reservations have
fixed ids in the portal's database, so the demo seed registers them on the endpoint with :func:`register_reservation`
(``POST <endpoint>/_aws/control.embedded/reservations``, answered by :mod:`sandbox.aws.moto_control` in the
endpoint's process). The endpoint forgets them when it stops, like everything else; the next seed registers them
again."""
from __future__ import annotations

import json
import urllib.error
import urllib.request

HOST = "control.embedded"


def _post(endpoint: str, path: str, spec: dict) -> None:
    if not endpoint.startswith(("http://", "https://")):
        raise ValueError(f"not an endpoint URL: {endpoint!r}")
    url = f"{endpoint.rstrip('/')}/_aws/{HOST}/{path}"
    headers = {"Content-Type": "application/json"}
    request = urllib.request.Request(url, data=json.dumps(spec).encode(), method="POST", headers=headers)  # noqa: S310
    try:
        with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310 - scheme checked
            response.read()
    except urllib.error.HTTPError as exc:  # the endpoint says why in its body
        raise ValueError(f"the embedded endpoint refused {path}: {exc.read().decode(errors='replace')[:500]}") from exc


def configure_exporters(endpoint: str, *, account_id: str, region: str, head_node: str, url: str, token: str) -> None:
    """Make the node exporters of the ParallelCluster whose head node is ``head_node`` push their health to ``url``
    with ``token`` (what the software stack's exporters would be configured with), as a rebooted or replaced node
    does when it comes back."""
    _post(endpoint, "exporters", {"account_id": account_id, "region": region, "head_node": head_node, "url": url,
                                  "token": token})


def start_agent(endpoint: str, *, account_id: str, region: str, cluster_name: str, url: str, cluster_id: int,
                token: str, wait: float = 5) -> None:
    """Run the portal's agent on the HyperPod Slurm cluster ``cluster_name``'s controller (the software stack's
    program, in the endpoint's process), polling the portal at ``url`` with the cluster's ``token``."""
    _post(endpoint, "agents", {"account_id": account_id, "region": region, "cluster_name": cluster_name, "url": url,
                               "cluster_id": cluster_id, "token": token, "wait": wait})


def seed_slow_link(endpoint: str, *, account_id: str, region: str, target: str, hostname: str,
                   factor: float = 0.55) -> None:
    """Degrade ``hostname``'s link to ``factor`` of the healthy bandwidth in the cluster whose head node (or HyperPod
    cluster, ``sagemaker-cluster:<name>_<node>``) ``target`` names: every emulated run over it reads lower."""
    _post(endpoint, "links", {"account_id": account_id, "region": region, "target": target, "hostname": hostname,
                              "factor": factor})


def register_reservation(endpoint: str, *, account_id: str, region: str, reservation_id: str, kind: str,
                         instance_type: str, availability_zone: str, count: int, in_use: int, days: int) -> None:
    """Record one reservation (``odcr``, ``capacity_block`` or ``training_plan``; a plan by its ARN or name) with
    ``in_use`` of its ``count`` instances running, replacing what the endpoint had under that id."""
    if not endpoint.startswith(("http://", "https://")):
        raise ValueError(f"not an endpoint URL: {endpoint!r}")
    body = json.dumps({"account_id": account_id, "region": region, "reservation_id": reservation_id, "kind": kind,
                       "instance_type": instance_type, "availability_zone": availability_zone, "count": count,
                       "in_use": in_use, "days": days}).encode()
    url = f"{endpoint.rstrip('/')}/_aws/{HOST}/reservations"
    headers = {"Content-Type": "application/json"}
    request = urllib.request.Request(url, data=body, method="POST", headers=headers)  # noqa: S310 - scheme checked
    with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310 - scheme checked
        response.read()
