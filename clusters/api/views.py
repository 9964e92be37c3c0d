from django.db.models import Prefetch
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, status
from rest_framework.decorators import action
from rest_framework.exceptions import APIException, NotFound, ValidationError
from rest_framework.response import Response
from rest_framework.serializers import as_serializer_error

from clusters.api.serializers import (
    BlueprintSerializer,
    ClusterConfigSerializer,
    ClusterSerializer,
    LaunchJobSerializer,
    LaunchSerializer,
    StackEventSerializer,
    refusal_errors,
)
from clusters.blueprints import catalog, pcluster_config
from clusters.filtersets import ClusterFilterSet, LaunchJobFilterSet, StackEventFilterSet
from clusters.launches import service as launch
from clusters.models import Blueprint, Cluster, LaunchJob, Stack, StackEvent
from portal.core import access
from portal.core.api.base import PortalReadOnlyViewSet
from portal.core.models import Organization


class Conflict(APIException):
    status_code = status.HTTP_409_CONFLICT
    default_code = "conflict"


def _refusal(exc: launch.ActionRefused) -> APIException:
    """A missing or wrong confirmation is bad input (400); a state or quota that does not allow the action now
    is a conflict with the data (409), as for the other transitions the API refuses."""
    if exc.field == "confirm":
        return ValidationError({"confirm": str(exc)})
    return Conflict({exc.field: str(exc)})


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

    @extend_schema(request=LaunchSerializer, responses={202: ClusterSerializer, 200: ClusterSerializer},
                   parameters=[OpenApiParameter("Idempotency-Key", str, location=OpenApiParameter.HEADER,
                                                description="Repeat the key to repeat the request safely: the "
                                                            "same key in the same organization answers 200 with "
                                                            "the cluster the first request made.")])
    def create(self, request, *args, **kwargs):
        key = request.headers.get("Idempotency-Key", "").strip()
        if len(key) > 128:
            raise ValidationError({"Idempotency-Key": "At most 128 characters."})
        earlier = self._earlier(request, key)
        if earlier is not None:
            return self._answer(request, earlier, created=False)
        serializer = LaunchSerializer(data=request.data, context={"request": request})
        serializer.is_valid(raise_exception=True)
        try:
            submitted = launch.submit(serializer.launch_request(serializer.validated_data, key))
        except launch.LaunchRefused as refusal:  # lost a race for the quota or the name since validation
            raise ValidationError(as_serializer_error(ValidationError(refusal_errors(refusal)))) from refusal
        return self._answer(request, submitted.cluster, created=submitted.created, dispatched=submitted.dispatched)

    def _earlier(self, request, key: str) -> Cluster | None:
        """The cluster a request with this Idempotency-Key made before (409 if the body names another)."""
        if not key or not hasattr(request.data, "get"):
            return None
        org = Organization.objects.filter(slug=str(request.data.get("organization", ""))).first()
        earlier = launch.previous_submission(org.pk, key, request.user) if org else None
        if earlier is not None and request.data.get("name") not in (None, earlier.name):
            raise Conflict(f"This Idempotency-Key was used for the launch of {earlier.name}; use a new key.")
        return earlier

    def _answer(self, request, cluster: Cluster, *, created: bool, dispatched: bool = True) -> Response:
        body = ClusterSerializer(self.get_queryset().get(pk=cluster.pk), context={"request": request}).data
        if not created:
            return Response(body, status=status.HTTP_200_OK)
        body["dispatched"] = dispatched
        if not dispatched:
            body["message"] = QUEUED.format(what="launch")
        return Response(body, status=status.HTTP_202_ACCEPTED)

    @extend_schema(request=None, responses={202: LaunchJobSerializer})
    @action(detail=True, methods=["post"])
    def retry(self, request, pk=None):
        cluster = self.get_object()
        try:
            job = launch.request_retry(cluster, user=request.user)
        except launch.ActionRefused as exc:
            raise _refusal(exc) from exc
        return _job_answer(job)

    @extend_schema(parameters=[OpenApiParameter("confirm", str, description="The cluster's name, to delete a ready cluster")],
                   responses={202: LaunchJobSerializer})
    def destroy(self, request, *args, **kwargs):
        self.write_action = access.TEAR_DOWN  # allowed once the cluster's cycle is archived too (winding down)
        cluster = self.get_object()
        confirm = request.query_params.get("confirm") or (request.data.get("confirm") if hasattr(request.data, "get") else None)
        try:
            job = launch.request_delete(cluster, user=request.user, confirmed=confirm == cluster.name)
        except launch.ActionRefused as exc:
            raise _refusal(exc) from exc
        return _job_answer(job)

    @extend_schema(responses={200: ClusterConfigSerializer})
    @action(detail=True, methods=["get"], url_path="pcluster-config")
    def pcluster_config(self, request, pk=None):
        """The generated ParallelCluster configuration; the YAML text is in ``config``."""
        cluster = self.get_object()
        text = pcluster_config.for_cluster(cluster)
        if text is None:
            raise NotFound("This cluster is not a ParallelCluster cluster.")
        return Response({"cluster": cluster.pk, "config": text,
                         "filename": f"{cluster.organization.slug}-{cluster.name}-pcluster.yaml"})


QUEUED = "The task queue is unreachable: the {what} is saved as scheduled and will be sent when it is back."


def _job_answer(job) -> Response:
    """202 with the job; when the broker could not take it, the job waits for the sweep and says so."""
    job.refresh_from_db()
    body = LaunchJobSerializer(job).data
    if not job.dispatched:
        body["message"] = QUEUED.format(what=job.get_kind_display().lower())
    return Response(body, status=status.HTTP_202_ACCEPTED)


class LaunchJobViewSet(PortalReadOnlyViewSet):
    queryset = LaunchJob.objects.select_related("requested_by", "cluster")
    serializer_class = LaunchJobSerializer
    filterset_class = LaunchJobFilterSet


class StackEventViewSet(PortalReadOnlyViewSet):
    queryset = StackEvent.objects.select_related("stack__cluster")
    serializer_class = StackEventSerializer
    filterset_class = StackEventFilterSet
