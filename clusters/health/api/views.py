"""Health API: reports, faults and validation runs through the access policy; the push endpoint
authenticated by a cluster token; token rotation for lead SAs."""
from __future__ import annotations

from django.shortcuts import get_object_or_404
from django.utils.cache import add_never_cache_headers
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import mixins, parsers, status
from rest_framework.exceptions import PermissionDenied
from rest_framework.response import Response
from rest_framework.throttling import ScopedRateThrottle
from rest_framework.views import APIView

from clusters.health import conf, links, services
from clusters.health.api.authentication import ClusterTokenAuthentication, HasClusterToken
from clusters.health.api.serializers import (
    GpuFaultSerializer,
    HealthReportDetailSerializer,
    HealthReportSerializer,
    IngestedSerializer,
    NodeHealthSerializer,
    TokenSerializer,
    ValidationRunSerializer,
)
from clusters.health.choices import Source
from clusters.health.filtersets import GpuFaultFilterSet, HealthReportFilterSet, ValidationRunFilterSet
from clusters.health.models import ClusterHealthConfig, GpuFault, HealthReport, NodeHealth, ValidationRun
from clusters.health.prometheus import ParseError
from clusters.models import Cluster
from portal import access
from portal.api.base import PortalModelViewSet, PortalReadOnlyViewSet
from portal.api.parsers import DepthLimitedJSONParser


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
    filterset_fields = ["report", "verdict"]
    ordering_fields = ["rank", "hostname"]


class GpuFaultViewSet(mixins.UpdateModelMixin, PortalReadOnlyViewSet):
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
    accepted) for the cluster the token belongs to. 400 with the line number for broken text, 401 for
    a bad token, 403 for a token of another cluster, 413 past HEALTH_INGEST_MAX_BYTES (decompressed)."""

    authentication_classes = [ClusterTokenAuthentication]
    permission_classes = [HasClusterToken]
    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "ingest"
    parser_classes: list = []  # the body is read here, in chunks, never through request.body

    @extend_schema(
        request={"text/plain": {"type": "string", "description": "Prometheus text exposition"}},
        responses={201: IngestedSerializer, 400: OpenApiResponse(description="not usable Prometheus text"),
                   401: OpenApiResponse(description="bad token"), 403: OpenApiResponse(description="token of another cluster"),
                   413: OpenApiResponse(description="over the size limit")},
    )
    def post(self, request, cluster_id: int):
        config: ClusterHealthConfig = request.auth
        if config.cluster_id != cluster_id:
            raise PermissionDenied("This token belongs to another cluster.")
        encoding = request.headers.get("Content-Encoding", "").lower().strip()
        if encoding not in ("", "identity", "gzip"):
            return Response({"detail": f"unsupported Content-Encoding {encoding!r}: send plain text or gzip"},
                            status=status.HTTP_415_UNSUPPORTED_MEDIA_TYPE)
        max_bytes = conf.get("HEALTH_INGEST_MAX_BYTES")
        length = request.headers.get("Content-Length")
        if length and length.isdigit() and int(length) > max_bytes:
            return Response({"detail": f"the body is over {max_bytes:,} bytes"},
                            status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE)
        try:
            body = services.read_body(request._request, max_bytes, gzipped=encoding == "gzip")
            ingested = services.ingest(config.cluster, body, Source.PUSH)
        except services.TooLarge as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE)
        except ParseError as exc:
            return Response({"detail": str(exc), "line": exc.line}, status=status.HTTP_400_BAD_REQUEST)
        except UnicodeDecodeError as exc:
            return Response({"detail": f"not UTF-8 text: {exc}"}, status=status.HTTP_400_BAD_REQUEST)
        summary = ingested.summary
        data = {"report": ingested.report.pk, "nodes": len(summary.nodes),
                "faults_opened": len(ingested.reconciled.opened), "faults_cleared": len(ingested.reconciled.cleared),
                "verdict_counts": summary.verdict_counts}
        return Response(data, status=status.HTTP_201_CREATED)


class RotateTokenView(APIView):
    """Make a new ingestion token for a cluster (lead SAs of its organization); the old one stops working.
    The token is answered once and never shown again."""

    @extend_schema(request=None, responses={201: TokenSerializer})
    def post(self, request, cluster_id: int):
        cluster = get_object_or_404(Cluster.objects.restrict(request.user), pk=cluster_id)
        if not access.can_in_organization(request.user, access.CHANGE, ClusterHealthConfig, cluster.organization_id):
            raise PermissionDenied("Only the organization's lead SAs rotate ingestion tokens.")
        token = services.rotate_token(cluster)
        response = Response({"cluster": cluster.pk, "token": token}, status=status.HTTP_201_CREATED)
        add_never_cache_headers(response)
        return response
