from django.db import transaction
from django.db.models import Prefetch
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, status
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, PermissionDenied, ValidationError
from rest_framework.response import Response

from clusters import catalog, config, launch
from clusters.api.serializers import (
    BlueprintSerializer,
    ClusterConfigSerializer,
    ClusterSerializer,
    LaunchJobSerializer,
    LaunchSerializer,
    StackEventSerializer,
)
from clusters.filtersets import ClusterFilterSet, LaunchJobFilterSet, StackEventFilterSet
from clusters.models import Blueprint, Cluster, LaunchJob, Stack, StackEvent
from portal import access
from portal.api.base import PortalReadOnlyViewSet


class BlueprintViewSet(PortalReadOnlyViewSet):
    queryset = Blueprint.objects.all()
    serializer_class = BlueprintSerializer
    lookup_field = "slug"
    filterset_fields = ["kind"]

    def get_queryset(self):
        catalog.sync()
        return super().get_queryset()


class ClusterViewSet(mixins.CreateModelMixin, mixins.DestroyModelMixin, PortalReadOnlyViewSet):
    """Clusters; POST launches, ``retry`` retries a failed one, DELETE deletes (``?confirm=<name>`` when ready)."""

    queryset = Cluster.objects.select_related("organization", "blueprint").prefetch_related(
        Prefetch("stacks", queryset=Stack.objects.select_related("blueprint").order_by("order")))
    serializer_class = ClusterSerializer
    filterset_class = ClusterFilterSet
    write_action = access.LAUNCH
    ordering_fields = ["name", "created", "state"]

    def get_serializer_class(self):
        return LaunchSerializer if self.action == "create" else ClusterSerializer

    @extend_schema(request=LaunchSerializer, responses={202: ClusterSerializer})
    def create(self, request, *args, **kwargs):
        serializer = LaunchSerializer(data=request.data, context={"request": request})
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        outcome: dict = {}
        with transaction.atomic():
            if not access.can_in_organization(request.user, access.LAUNCH, Cluster, data["organization"].pk):
                raise PermissionDenied("You do not lead this organization.")
            cluster, job = launch.create_launch(
                organization=data["organization"], name=data["name"], blueprint_slug=data["blueprint"],
                full_stack=data["full_stack"], region=data["region"], parameters=data["parameters"], user=request.user)
            launch.dispatch_on_commit(job, outcome)
        body = ClusterSerializer(self.get_queryset().get(pk=cluster.pk), context={"request": request}).data
        body["dispatched"] = bool(outcome.get("dispatched"))
        if not body["dispatched"]:
            body["message"] = "The task queue is unreachable: the launch is saved as scheduled and will be sent when it is back."
        return Response(body, status=status.HTTP_202_ACCEPTED)

    @extend_schema(request=None, responses={202: LaunchJobSerializer})
    @action(detail=True, methods=["post"])
    def retry(self, request, pk=None):
        cluster = self.get_object()
        outcome: dict = {}
        try:
            with transaction.atomic():
                job = launch.request_retry(cluster, user=request.user)
                launch.dispatch_on_commit(job, outcome)
        except launch.ActionRefused as exc:
            raise ValidationError({"state": str(exc)}) from exc
        job.refresh_from_db()
        return Response(LaunchJobSerializer(job).data, status=status.HTTP_202_ACCEPTED)

    @extend_schema(parameters=[OpenApiParameter("confirm", str, description="The cluster's name, to delete a ready cluster")],
                   responses={202: LaunchJobSerializer})
    def destroy(self, request, *args, **kwargs):
        cluster = self.get_object()
        confirm = request.query_params.get("confirm") or (request.data.get("confirm") if hasattr(request.data, "get") else None)
        outcome: dict = {}
        try:
            with transaction.atomic():
                job = launch.request_delete(cluster, user=request.user, confirmed=confirm == cluster.name)
                launch.dispatch_on_commit(job, outcome)
        except launch.ActionRefused as exc:
            raise ValidationError({"confirm": str(exc)}) from exc
        job.refresh_from_db()
        return Response(LaunchJobSerializer(job).data, status=status.HTTP_202_ACCEPTED)

    @extend_schema(responses={200: ClusterConfigSerializer})
    @action(detail=True, methods=["get"], url_path="pcluster-config")
    def pcluster_config(self, request, pk=None):
        """The generated ParallelCluster configuration; the YAML text is in ``config``."""
        cluster = self.get_object()
        text = config.for_cluster(cluster)
        if text is None:
            raise NotFound("This cluster is not a ParallelCluster cluster.")
        return Response({"cluster": cluster.pk, "config": text,
                         "filename": f"{cluster.organization.slug}-{cluster.name}-pcluster.yaml"})


class LaunchJobViewSet(PortalReadOnlyViewSet):
    queryset = LaunchJob.objects.select_related("requested_by", "cluster")
    serializer_class = LaunchJobSerializer
    filterset_class = LaunchJobFilterSet


class StackEventViewSet(PortalReadOnlyViewSet):
    queryset = StackEvent.objects.select_related("stack")
    serializer_class = StackEventSerializer
    filterset_class = StackEventFilterSet
