"""API of the report to the funder: reports (program managers issue and correct them), parts (their lead SAs
write the narratives of a draft; everyone of the organization reads them) and comments on parts. Scoped by the
one access policy and written through ``services``; a refusal of the rules is a 409 with the reason."""
from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied
from rest_framework.response import Response

from portal.core import access, submissions
from portal.core.api.base import PortalModelViewSet, PortalReadOnlyViewSet, PortalUpdateMixin
from portal.core.generic import get_object
from portal.review.funder import sending, services
from portal.review.funder.api.serializers import (
    CorrectSerializer,
    FunderReportCommentSerializer,
    FunderReportPartSerializer,
    FunderReportSendingSerializer,
    FunderReportSerializer,
    SendSerializer,
)
from portal.review.funder.models import FunderReport, FunderReportComment, FunderReportPart, FunderReportSending


class FunderReportViewSet(PortalReadOnlyViewSet):
    """Reports to the funder. ``issue`` freezes a draft (once: a repeat answers the issued report);
    ``correct`` drafts the next version of an issued one, saying what changes."""

    queryset = FunderReport.objects.all()
    serializer_class = FunderReportSerializer

    def _managed(self, request, pk) -> FunderReport:
        return get_object(request, FunderReport.objects.all(), access.APPROVE,
                          "Only a program manager issues, corrects or sends a report to the funder.", pk=pk)

    @extend_schema(request=None, responses=FunderReportSerializer)
    @action(detail=True, methods=["post"], serializer_class=serializers.Serializer)
    def issue(self, request, pk=None):
        try:
            report = services.issue(self._managed(request, pk), request.user)
        except services.ReportError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return Response(FunderReportSerializer(report, context={"request": request}).data)

    @extend_schema(request=CorrectSerializer, responses={201: FunderReportSerializer})
    @action(detail=True, methods=["post"], serializer_class=CorrectSerializer)
    @submissions.idempotent
    def correct(self, request, pk=None):
        report = self._managed(request, pk)
        body = CorrectSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            draft = services.correct(report, request.user, body.validated_data["note"])
        except services.ReportError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return Response(FunderReportSerializer(draft, context={"request": request}).data, status=status.HTTP_201_CREATED)


    @extend_schema(request=SendSerializer, responses={201: FunderReportSendingSerializer})
    @action(detail=True, methods=["post"], serializer_class=SendSerializer)
    @submissions.idempotent
    def send(self, request, pk=None):
        """Send an issued report to the funder's recipients (PDF and workbook in each language chosen); the
        e-mail is queued on the portal's outbound path. A superseded version needs ``superseded_ok``."""
        report = self._managed(request, pk)
        body = SendSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            sent = sending.send(report, request.user, sorted(body.validated_data["languages"]),
                                superseded_ok=body.validated_data["superseded_ok"],
                                note=body.validated_data.get("note", ""))
        except sending.SendError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return Response(FunderReportSendingSerializer(sent, context={"request": request}).data,
                        status=status.HTTP_201_CREATED)


class FunderReportSendingViewSet(PortalReadOnlyViewSet):
    """Every sending of a report to the funder: who sent which version (number and hash), to whom, in which
    languages, and the e-mail's state (program managers)."""

    queryset = FunderReportSending.objects.select_related("sent_by", "delivery")
    serializer_class = FunderReportSendingSerializer
    filterset_fields = ["report"]


class FunderReportPartViewSet(PortalUpdateMixin, PortalReadOnlyViewSet):
    """The organizations' parts the caller may see; PUT/PATCH (lead SAs, with ``If-Match``) write a draft's
    narratives."""

    queryset = FunderReportPart.objects.select_related("report", "organization")
    serializer_class = FunderReportPartSerializer
    http_method_names = ["get", "put", "patch", "head", "options"]

    def perform_update(self, serializer):
        if not serializer.instance.report.is_draft:
            raise PermissionDenied("An issued report is frozen: a correction is a new version.")
        super().perform_update(serializer)


class FunderReportCommentViewSet(PortalModelViewSet):
    """Comments on the parts the caller may see; its organization's people and program managers write them."""

    queryset = FunderReportComment.objects.select_related("author")
    serializer_class = FunderReportCommentSerializer
    http_method_names = ["get", "post", "head", "options"]

    def organization_id_for(self, instance) -> int | None:
        return instance.part.organization_id

    def perform_create(self, serializer):
        serializer.validated_data["author"] = self.request.user
        super().perform_create(serializer)
