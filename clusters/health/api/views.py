"""Health API: reports, faults and validation runs through the access policy; the push endpoint
authenticated by a cluster token; token rotation for lead SAs."""
from __future__ import annotations

import logging

from django.conf import settings
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils.cache import add_never_cache_headers
from django.utils.translation import gettext
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import parsers, status
from rest_framework.exceptions import PermissionDenied
from rest_framework.response import Response
from rest_framework.throttling import ScopedRateThrottle
from rest_framework.views import APIView

from clusters.health.api.authentication import ClusterTokenAuthentication, HasClusterToken
from clusters.health.api.serializers import (
    GpuFaultSerializer,
    HealthPushSerializer,
    HealthReportDetailSerializer,
    HealthReportSerializer,
    NodeHealthSerializer,
    TokenSerializer,
    ValidationRunSerializer,
)
from clusters.health.api.throttles import ClusterTokenRateThrottle
from clusters.health.faults import links
from clusters.health.filtersets import GpuFaultFilterSet, HealthReportFilterSet, ValidationRunFilterSet
from clusters.health.ingest import bodies, pushes
from clusters.health.ingest import service as services
from clusters.health.models import (
    ClusterHealthConfig,
    GpuFault,
    HealthPush,
    HealthReport,
    NodeHealth,
    ValidationRun,
)
from clusters.health.readers.prometheus import ParseError
from clusters.health.validation import agent
from clusters.models import Cluster
from portal.core import access, aws
from portal.core.api.base import PortalModelViewSet, PortalReadOnlyViewSet, PortalUpdateMixin
from portal.core.api.parsers import DepthLimitedJSONParser
from portal.core.generic import get_object

logger = logging.getLogger(__name__)


class HealthReportViewSet(PortalReadOnlyViewSet):
    """Summarized health reports (figures, verdict counts; the detail adds faults and panels)."""

    queryset = HealthReport.objects.all()
    serializer_class = HealthReportSerializer
    filterset_class = HealthReportFilterSet
    ordering_fields = ["received_at"]

    def get_queryset(self):
        qs = super().get_queryset()
        return qs.defer("state") if self.action == "retrieve" else qs.defer("summary", "state")

    def get_serializer_class(self):
        return HealthReportDetailSerializer if self.action == "retrieve" else HealthReportSerializer


class NodeHealthViewSet(PortalReadOnlyViewSet):
    """Node verdicts of each cluster's latest report, worst first."""

    queryset = NodeHealth.objects.all()
    serializer_class = NodeHealthSerializer
    filterset_fields = ["report", "cluster", "verdict"]
    ordering_fields = ["rank", "hostname"]


class GpuFaultViewSet(PortalUpdateMixin, PortalReadOnlyViewSet):
    """GPU, EFA and node faults with their lifecycle (``open=true`` for the current ones). PATCH
    ``{"interaction": <id or null>}`` links a fault to a support interaction of the same organization
    (lead SAs); every other field is read-only."""

    queryset = GpuFault.objects.select_related("cluster")
    serializer_class = GpuFaultSerializer
    filterset_class = GpuFaultFilterSet
    ordering_fields = ["severity_rank", "first_seen", "last_seen", "hostname"]
    http_method_names = ["get", "patch", "head", "options"]

    def get_queryset(self):
        return links.with_visible_interaction(super().get_queryset(), self.request.user)

    def organization_id_for(self, instance):
        return instance.cluster.organization_id


class ValidationRunViewSet(PortalModelViewSet):
    """NCCL validation runs. Create by uploading nccl-tests output (multipart ``file`` or ``text``)."""

    queryset = ValidationRun.objects.select_related("uploaded_by").defer("raw_text")
    serializer_class = ValidationRunSerializer
    filterset_class = ValidationRunFilterSet
    ordering_fields = ["uploaded_at", "verdict", "peak_busbw"]
    http_method_names = ["get", "post", "head", "options"]
    parser_classes = [DepthLimitedJSONParser, parsers.MultiPartParser, parsers.FormParser]

    def organization_id_for(self, instance):
        return instance.cluster.organization_id


class IngestView(APIView):
    """Push one Prometheus exposition (dcgm-exporter and/or EFA exporter text; ``Content-Encoding: gzip``
    accepted) for the cluster the token belongs to. The body is stored and parsed by the health worker:
    the answer is 202 with the push's id and a ``Location`` to follow it (pending, processing, done with
    its report, failed with the reason, or superseded). Scope: ``?scope=full`` (or ``X-Health-Scope``)
    when the push is the whole cluster; by default it covers the nodes it contains. ``?nodes=a,b`` (or
    ``X-Health-Nodes``) declares the nodes it is for, so a newer push of the same nodes supersedes it
    while queued. 401 for a bad token, 403 for a token of another cluster, 413 past
    HEALTH_INGEST_MAX_BYTES (decompressed), 429 past HEALTH_PUSH_RATE per token."""

    authentication_classes = [ClusterTokenAuthentication]
    permission_classes = [HasClusterToken]
    throttle_classes = [ScopedRateThrottle, ClusterTokenRateThrottle]
    throttle_scope = "ingest"
    parser_classes: list = []  # the body is read here, in chunks, never through request.body

    @extend_schema(
        parameters=[OpenApiParameter("scope", str, enum=["full", "nodes"], required=False),
                    OpenApiParameter("nodes", str, required=False, description="comma-separated host names")],
        request={"text/plain": {"type": "string", "description": "Prometheus text exposition"}},
        responses={202: HealthPushSerializer, 400: OpenApiResponse(description="bad scope, empty or not gzip"),
                   401: OpenApiResponse(description="bad token"), 403: OpenApiResponse(description="token of another cluster"),
                   413: OpenApiResponse(description="over the size limit"),
                   429: OpenApiResponse(description="too many pushes for this token"),
                   503: OpenApiResponse(description="the push storage is unavailable (Retry-After)")},
    )
    def post(self, request, cluster_id: int):
        config: ClusterHealthConfig = request.auth
        if config.cluster_id != cluster_id:
            raise PermissionDenied("This token belongs to another cluster.")
        encoding = request.headers.get("Content-Encoding", "").lower().strip()
        if encoding not in ("", "identity", "gzip"):
            return Response({"detail": f"unsupported Content-Encoding {encoding!r}: send plain text or gzip"},
                            status=status.HTTP_415_UNSUPPORTED_MEDIA_TYPE)
        try:
            scope, declared = pushes.parse_scope(request.query_params.get("scope") or request.headers.get("X-Health-Scope"),
                                                 request.query_params.get("nodes") or request.headers.get("X-Health-Nodes"))
        except ValueError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        max_bytes = settings.HEALTH_INGEST_MAX_BYTES
        length = request.headers.get("Content-Length")
        if length and length.isdigit() and int(length) > max_bytes:
            return Response({"detail": f"the body is over {max_bytes:,} bytes"},
                            status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE)
        try:
            push = pushes.receive(config.cluster, request._request, max_bytes=max_bytes, gzipped=encoding == "gzip",
                                  scope=scope, declared=declared)
        except services.TooLarge as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE)
        except bodies.StorageUnavailable as exc:  # nothing was kept: the writer aborted and no row was made
            logger.warning("push of cluster %s refused, storage unavailable: %s", cluster_id, exc)
            return Response({"detail": "The push storage is unavailable; send the push again later."},
                            status=status.HTTP_503_SERVICE_UNAVAILABLE,
                            headers={"Retry-After": str(settings.HEALTH_PUSH_STORAGE_RETRY_SECONDS)})
        except ParseError as exc:
            return Response({"detail": str(exc), "line": exc.line}, status=status.HTTP_400_BAD_REQUEST)
        location = reverse("health-api:push-status", kwargs={"cluster_id": cluster_id, "push_id": push.pk})
        data = HealthPushSerializer(push).data
        return Response(data, status=status.HTTP_202_ACCEPTED, headers={"Location": request.build_absolute_uri(location)})


class PushStatusView(APIView):
    """Where a push stands, for the exporter that sent it (the same cluster token)."""

    authentication_classes = [ClusterTokenAuthentication]
    permission_classes = [HasClusterToken]

    @extend_schema(responses={200: HealthPushSerializer, 401: OpenApiResponse(description="bad token"),
                              404: OpenApiResponse(description="no such push for this cluster")})
    def get(self, request, cluster_id: int, push_id: int):
        config: ClusterHealthConfig = request.auth
        if config.cluster_id != cluster_id:
            raise PermissionDenied("This token belongs to another cluster.")
        push = get_object_or_404(HealthPush, pk=push_id, cluster_id=cluster_id)
        return Response(HealthPushSerializer(push).data)


class HealthPushViewSet(PortalReadOnlyViewSet):
    """Pushed scrapes and where each stands: pending, processing, done (with its report), failed (with
    the reason) or superseded by a newer push of the same nodes."""

    queryset = HealthPush.objects.all()
    serializer_class = HealthPushSerializer
    filterset_fields = ["cluster", "status"]
    ordering_fields = ["received_at"]


class RotateTokenView(APIView):
    """Make a new ingestion token for a cluster (lead SAs of its organization); the old one stops working.
    The token is answered once and never shown again."""

    @extend_schema(request=None, responses={201: TokenSerializer})
    def post(self, request, cluster_id: int):
        cluster = get_object(request, Cluster.objects.all(), pk=cluster_id)
        if not access.can_in_organization(request.user, access.CHANGE, ClusterHealthConfig, cluster.organization_id):
            raise PermissionDenied("Only the organization's lead SAs rotate ingestion tokens.")
        access.refuse_archived(cluster)
        try:
            token = agent.rotate_token(cluster)
        except aws.AwsError:
            logger.warning("the agent token of cluster %s was not written to its SSM parameter", cluster.pk, exc_info=True)
            return Response({"detail": gettext(
                "The new token could not be written to the cluster's SSM parameter, where the controller's agent "
                "reads it, so nothing changed: the current token still works.")}, status=status.HTTP_502_BAD_GATEWAY)
        response = Response({"cluster": cluster.pk, "token": token}, status=status.HTTP_201_CREATED)
        add_never_cache_headers(response)
        return response
