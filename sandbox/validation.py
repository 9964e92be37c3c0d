"""Demo validation: the lead SA of the first ready Slurm cluster has started an NCCL validation (all_reduce and
all_gather across all nodes) through the same service the cluster page's form calls. With the embedded endpoint
the demo worker submits it with sbatch on the emulated head node, the emulated job posts its nccl-tests output
back to the demo server (``PORTAL_BASE_URL``, which ``run_demo`` sets) and the verdict appears on the
cluster's health page. Without the endpoint there is no head node to reach: nothing is started.
Idempotent: the validation has a fixed key."""
from __future__ import annotations

from django.conf import settings

from clusters.choices import ClusterState
from clusters.health.validation import service as validation
from clusters.models import Cluster
from portal.core.models import Membership

KEY = "demo-validation"


def seed(context: dict) -> dict:
    if not settings.AWS_ENDPOINT_URL or not settings.PORTAL_BASE_URL:
        return context
    cluster = (Cluster.objects.filter(state=ClusterState.READY, orchestrator__in=validation.ORCHESTRATORS,
                                      stacks__role="cluster").exclude(stacks__stack_id="")
               .select_related("organization").order_by("organization__name", "name").first())
    if cluster is None:
        return context
    lead = Membership.objects.filter(organization=cluster.organization, role="lead_sa").select_related("user").first()
    try:
        job, _ = validation.start(cluster, actor=lead.user if lead else None, collectives=["all_reduce", "all_gather"],
                                  key=KEY)
    except validation.ValidationRefused:  # e.g. a HyperPod Slurm cluster whose controller agent has not polled yet
        return context
    context["validation_job"] = job
    return context
