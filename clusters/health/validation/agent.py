"""The portal's side of the controller agent (docs/DECISIONS.md 42): work items queued for a cluster, claimed by its
agent's long poll, answered once.

HyperPod nodes are not SSM ``SendCommand`` targets, so on HyperPod Slurm what the portal asks of Slurm (``sbatch``,
``scancel``, ``sacct``, ``scontrol``, the node listing) is an ``AgentWorkItem``: the agent on the controller polls
with the cluster's ingestion token (``poll``), gets only its own cluster's items, runs each once and posts the result
(``answer``: compare-and-set, so a second post of an item changes nothing). A claim is a lease
(``portal.core.jobs``): one whose lease ran out is queued again and handed out with the next poll. ``headnode`` reads
an item as it reads an SSM invocation, so validation and remediation follow either transport the same way.
"""
from __future__ import annotations

import contextlib
import time
from datetime import timedelta

from botocore.exceptions import BotoCoreError, ClientError
from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext

from clusters.choices import Orchestrator
from clusters.health.choices import WORK_OPEN, WorkKind, WorkState
from clusters.health.ingest import service as ingest_service
from clusters.health.models import AgentWorkItem, ClusterHealthConfig
from clusters.health.validation import slurm_names
from clusters.software import release
from portal.core import aws

BATCH = 10  # items handed out per poll
OUTPUT_LIMIT = 256 * 1024  # characters kept of each stream of an answer
WAIT_STEP = 0.25  # seconds between two looks at the queue while a poll waits
PUBLISH_TIMEOUTS, PUBLISH_ATTEMPTS = (3, 5), 2  # the token's PutParameter: connect and read seconds, attempts


class Unknown(LookupError):
    """No such item of this cluster."""


def queue(cluster, kind: str, payload: dict, comment: str = "") -> AgentWorkItem:
    if kind not in WorkKind.values:
        raise ValueError(f"not a kind of agent work: {kind!r}")
    return AgentWorkItem.objects.create(cluster=cluster, kind=kind, payload=payload, comment=comment[:100])


def cluster_name(cluster) -> str:
    """The name the cluster's stack was created with (its bundle's ``CLUSTER_NAME``)."""
    return ((cluster.parameters or {}).get("cluster") or {}).get("ClusterName") or cluster.name


def publish_token(cluster, *, only_if_unset: bool = False) -> str | None:
    """A new token for the cluster, written to the SSM parameter its controller's agent reads
    (``release.agent_token_parameter``) in the organization's account, then kept (hashed) as the cluster's
    ingestion token. The row is locked across the write and saved only once AWS took the value, so a refused or
    failed write leaves the old token working and the parameter as it was (raises ``aws.AwsError``).
    ``only_if_unset``: nothing when the cluster already has a token (a launch step run again)."""
    with transaction.atomic():
        ClusterHealthConfig.objects.get_or_create(cluster=cluster)
        config = ClusterHealthConfig.objects.select_for_update().get(cluster=cluster)
        if only_if_unset and config.token_hash:
            return None
        token = config.rotate_token()
        try:
            # Bounded: a person's rotation waits on it, holding the row (seconds, not botocore's minutes).
            ssm = aws.client("ssm", organization=cluster.organization, region=cluster.region,
                             timeouts=PUBLISH_TIMEOUTS, max_attempts=PUBLISH_ATTEMPTS)
            ssm.put_parameter(Name=release.agent_token_parameter(cluster_name(cluster)), Value=token,
                              Type="SecureString", Overwrite=True,
                              Description="The GENIAC portal agent's token for this cluster (geniac-agent.service)")
        except (ClientError, BotoCoreError) as exc:
            raise aws.translate(exc) from exc
        config.save(update_fields=["token_hash", "token_hint", "token_rotated_at", "updated"])
    return token


def rotate_token(cluster) -> str:
    """A new ingestion token (the old one stops working): on HyperPod Slurm written to the parameter the
    controller's agent reads as well (nothing changes when AWS refuses), elsewhere only kept (hashed)."""
    if uses_agent(cluster):
        return publish_token(cluster)
    return ingest_service.rotate_token(cluster)


def uses_agent(cluster) -> bool:
    """Whether the cluster's Slurm is reached through the agent (HyperPod Slurm), so its token lives in SSM."""
    return cluster.orchestrator == Orchestrator.HYPERPOD


def last_seen(cluster):
    return ClusterHealthConfig.objects.filter(cluster=cluster).values_list("agent_seen_at", flat=True).first()


def absent(cluster) -> str:
    """Why the portal cannot count on the cluster's agent now, in plain words ("" when it polled lately)."""
    seen = last_seen(cluster)
    if seen is not None and timezone.now() - seen <= timedelta(minutes=settings.AGENT_SEEN_MINUTES):
        return ""
    if seen is None:
        return gettext("The portal's agent on this cluster's controller has never contacted the portal. On HyperPod "
                       "Slurm the portal reaches Slurm only through it: check that the lifecycle scripts installed "
                       "it (geniac-agent.service) and that the controller can reach the portal over HTTPS.")
    return gettext("The portal's agent on this cluster's controller has not contacted the portal for %(minutes)s "
                   "minutes (last at %(seen)s). On HyperPod Slurm the portal reaches Slurm only through it: "
                   "check geniac-agent.service on the controller.") % {
        "minutes": int((timezone.now() - seen).total_seconds() // 60), "seen": f"{timezone.localtime(seen):%Y-%m-%d %H:%M %Z}"}


def requeue(cluster=None) -> int:
    """Claimed items whose lease ran out go back to the queue (their agent died or lost its answer)."""
    rows = AgentWorkItem.objects.filter(state=WorkState.CLAIMED, lease_until__lt=timezone.now())
    if cluster is not None:
        rows = rows.filter(cluster=cluster)
    return rows.update(state=WorkState.QUEUED, lease_until=None)


def claim(cluster, limit: int = BATCH) -> list[AgentWorkItem]:
    """Take the lease of the cluster's next queued items, oldest first (rows another poll holds are skipped)."""
    requeue(cluster)
    now = timezone.now()
    with transaction.atomic():
        ids = list(AgentWorkItem.objects.select_for_update(skip_locked=True)
                   .filter(cluster=cluster, state=WorkState.QUEUED).order_by("created_at", "pk")
                   .values_list("pk", flat=True)[:limit])
        if not ids:
            return []
        lease = now + timedelta(seconds=AgentWorkItem.lease_seconds())
        AgentWorkItem.objects.filter(pk__in=ids, state=WorkState.QUEUED).update(  # the rows are locked: all of them
            state=WorkState.CLAIMED, claimed_at=now, lease_until=lease, heartbeat=now, attempts=F("attempts") + 1)
    return list(AgentWorkItem.objects.filter(pk__in=ids).order_by("created_at", "pk"))


def poll(config: ClusterHealthConfig, wait: float | None = None, version: str = "") -> list[AgentWorkItem]:
    """The agent's long poll: its cluster's next items, waiting up to ``wait`` seconds (at most AGENT_POLL_SECONDS)
    for one to arrive. Each poll is remembered as the agent being alive."""
    limit = float(settings.AGENT_POLL_SECONDS)
    wait = limit if wait is None else max(0.0, min(float(wait), limit))
    ClusterHealthConfig.objects.filter(pk=config.pk).update(agent_seen_at=timezone.now(), agent_version=version[:32])
    give_up = time.monotonic() + wait
    while True:
        items = claim(config.cluster)
        if items or time.monotonic() >= give_up:
            return items
        time.sleep(WAIT_STEP)


def answer(cluster, pk: int, *, exit_status: int, stdout: str = "", stderr: str = "",
           ran: bool = True) -> tuple[AgentWorkItem, bool]:
    """Record the agent's result of item ``pk`` once; (item, applied). ``ran`` False: the agent could not run it
    (the item fails with its words). A repeat changes nothing and answers applied False."""
    item = AgentWorkItem.objects.filter(pk=pk, cluster=cluster).first()
    if item is None:
        raise Unknown(pk)
    state = WorkState.DONE if ran else WorkState.FAILED
    applied = AgentWorkItem.finish(pk, state, allowed=WORK_OPEN, exit_status=exit_status,
                                   stdout=stdout[:OUTPUT_LIMIT], stderr=stderr[:OUTPUT_LIMIT])
    item.refresh_from_db()
    if applied and item.kind == WorkKind.NODES and ran and exit_status == 0:
        # The listing feeds the cluster's map of Slurm's names whoever asked for it; text that cannot be read is
        # left to the asker, which reads the same and says why.
        with contextlib.suppress(ValueError):
            slurm_names.store(cluster, slurm_names.parse(item.stdout))
    return item, applied
