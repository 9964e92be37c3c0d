"""Clusters of an organization. The launch pipeline, health and validation extend this app."""
from django.conf import settings
from django.db import models
from django.urls import reverse

from clusters.choices import ClusterState, Orchestrator
from portal.choices import REGION_CHOICES
from portal.querysets import RestrictedQuerySet

# States in which a cluster holds (or is about to hold) its instances: they count against quota.
HOLDING_STATES = (ClusterState.SCHEDULED, ClusterState.CREATING, ClusterState.READY, ClusterState.DELETING)


class Cluster(models.Model):
    """A training cluster in an organization's account.

    ``state`` is the portal's lifecycle; ``stack_status`` is CloudFormation's own status, kept apart.
    """

    organization = models.ForeignKey("portal.Organization", on_delete=models.PROTECT, related_name="clusters")
    name = models.SlugField(max_length=60)
    orchestrator = models.CharField(max_length=32, choices=Orchestrator.choices, default=Orchestrator.PARALLELCLUSTER)
    region = models.CharField(max_length=32, choices=REGION_CHOICES, default="ap-northeast-1")
    availability_zone = models.CharField(max_length=32, blank=True)
    instance_type = models.CharField(max_length=32)
    node_count = models.PositiveIntegerField()
    state = models.CharField(max_length=16, choices=ClusterState.choices, default=ClusterState.SCHEDULED, db_index=True)
    stack_status = models.CharField(max_length=64, blank=True)
    error_message = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["organization__name", "name"]
        constraints = [models.UniqueConstraint(fields=["organization", "name"], name="unique_cluster_name_per_org")]

    def __str__(self) -> str:
        return f"{self.organization.slug}/{self.name}"

    def get_absolute_url(self) -> str:
        return reverse("clusters:cluster_detail", kwargs={"pk": self.pk})

    @property
    def holds_capacity(self) -> bool:
        return self.state in HOLDING_STATES
