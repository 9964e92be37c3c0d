"""API of the call area: calls (program managers open and award them), applications (their organizations draft
and submit them), reviews (their reviewers score them). Scoped by the one access policy, written through
``services``; a rule's refusal is a 409 with the reason, a bad line a 400."""
from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.response import Response

from portal.core import access, submissions
from portal.core.api.base import PortalModelViewSet, PortalReadOnlyViewSet
from portal.core.api.parsers import DepthLimitedJSONParser
from portal.core.generic import get_object
from portal.core.models import Organization
from portal.engagement.calls import services
from portal.engagement.calls.api.serializers import (
    ApplicationSerializer,
    ApplicationVersionSerializer,
    AwardResultSerializer,
    AwardSerializer,
    CallSerializer,
    ConflictSerializer,
    ReviewSerializer,
    StartApplicationSerializer,
)
from portal.engagement.calls.models import Application, ApplicationVersion, Call, ReviewAssignment


def _conflict(exc: Exception) -> Response:
    text = " ".join(exc.messages) if isinstance(exc, ValidationError) else str(exc)
    return Response({"detail": text}, status=status.HTTP_409_CONFLICT)


# Calls and applications carry capacity lines and criteria (lists of objects), which a form-encoded body cannot
# hold: their writes take JSON only, and the schema says so.
JSON_ONLY = [DepthLimitedJSONParser]


class CallViewSet(PortalModelViewSet):
    """Calls for the next cycle: every signed-in organization reads them; program managers open and award."""

    queryset = Call.objects.all()
    serializer_class = CallSerializer
    parser_classes = JSON_ONLY
    http_method_names = ["get", "post", "put", "patch", "head", "options"]

    @extend_schema(request=AwardSerializer, responses=AwardResultSerializer)
    @action(detail=True, methods=["post"], serializer_class=AwardSerializer)
    @submissions.idempotent
    def award(self, request, pk=None):
        """Award every submitted application some, all or none of what it asked; refused (409, nothing written)
        when the sum exceeds the call's offer or AWS offers no Capacity Block or training plan for a line."""
        call = get_object(request, Call.objects.all(), access.APPROVE, "Only a program manager awards a call.", pk=pk)
        serializer = AwardSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            decisions = {int(k): v for k, v in serializer.validated_data["decisions"].items()}
        except ValueError:
            raise serializers.ValidationError({"decisions": "Keys are application ids."}) from None
        try:
            done = services.award(call, decisions, request.user, serializer.validated_data.get("note", ""))
        except services.CallError as exc:
            return _conflict(exc)
        except ValidationError as exc:
            raise serializers.ValidationError({"decisions": exc.messages}) from exc
        return Response(done)


class ApplicationViewSet(PortalModelViewSet):
    """Applications the caller may see. POST starts (or returns) an organization's draft, pre-filled from its
    record of the current cycle; PUT/PATCH edit a draft; ``submit`` freezes a version; ``reopen`` (program
    managers) allows a late edit."""

    queryset = Application.objects.select_related("call", "organization")
    serializer_class = ApplicationSerializer
    filterset_fields = ["call", "status", "organization"]
    parser_classes = JSON_ONLY
    http_method_names = ["get", "post", "put", "patch", "head", "options"]

    @extend_schema(request=StartApplicationSerializer, responses={
        201: ApplicationSerializer,
        404: OpenApiResponse(OpenApiTypes.OBJECT, description="No such call or organization, or one the caller "
                                                              "may not see.")})
    @submissions.idempotent
    def create(self, request, *args, **kwargs):
        serializer = StartApplicationSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            call = get_object(request, Call.objects.all(), pk=serializer.validated_data["call"])
            organization = get_object(request, Organization.objects.all(),
                                      slug=serializer.validated_data["organization"])
        except Http404:
            raise NotFound() from None  # which of the two the caller may not see is not said
        if not access.can_in_organization(request.user, access.CHANGE, Application, organization.pk):
            raise PermissionDenied("You may not apply for this organization.")
        try:
            application = services.start_application(call, organization, request.user)
        except services.CallError as exc:
            return _conflict(exc)
        return Response(ApplicationSerializer(application, context={"request": request}).data, status=201)

    def perform_update(self, serializer):
        with transaction.atomic():
            try:
                services.refuse_unless_editable(serializer.instance)
            except services.CallError as exc:
                raise PermissionDenied(str(exc)) from exc
            serializer.instance._history_user = self.request.user
            instance = serializer.save()
            self._check_org(instance)

    @extend_schema(request=None, responses={201: ApplicationVersionSerializer})
    @action(detail=True, methods=["post"], serializer_class=serializers.Serializer)
    @submissions.idempotent
    def submit(self, request, pk=None):
        application = self.get_object()
        try:
            version = services.submit(application, request.user)
        except (services.CallError, ValidationError) as exc:
            return _conflict(exc)
        return Response(ApplicationVersionSerializer(version).data, status=201)

    @extend_schema(request=None, responses=ApplicationSerializer)
    @action(detail=True, methods=["post"], serializer_class=serializers.Serializer)
    def reopen(self, request, pk=None):
        application = self.get_object()
        if not access.can(request.user, access.APPROVE, application):
            raise PermissionDenied("Only a program manager reopens an application for a late edit.")
        try:
            services.reopen(application, request.user)
        except services.CallError as exc:
            return _conflict(exc)
        application.refresh_from_db()
        return Response(ApplicationSerializer(application, context={"request": request}).data)

    @extend_schema(responses=ApplicationVersionSerializer(many=True))
    @action(detail=True, methods=["get"], pagination_class=None)  # every version, unpaginated, as the schema says
    def versions(self, request, pk=None):
        application = self.get_object()
        # restrict: the application's versions beside it, under the versions' own rule (a viewset has no ``visible``)
        rows = ApplicationVersion.objects.restrict(request.user).filter(application=application)
        return Response(ApplicationVersionSerializer(rows, many=True).data)


class ReviewViewSet(PortalReadOnlyViewSet):
    """Review assignments: a reviewer's own, every one for program managers. The reviewer scores with ``score``
    and steps aside with ``conflict`` (the application is then no longer theirs to see)."""

    queryset = ReviewAssignment.objects.select_related("application__call")
    serializer_class = ReviewSerializer

    def _own(self) -> ReviewAssignment:
        assignment = self.get_object()
        if assignment.reviewer_id != self.request.user.pk:
            raise PermissionDenied("Only the assigned reviewer scores or declares a conflict.")
        return assignment

    @extend_schema(request=ReviewSerializer, responses=ReviewSerializer)
    @action(detail=True, methods=["post"], serializer_class=ReviewSerializer)
    def score(self, request, pk=None):
        assignment = self._own()
        serializer = ReviewSerializer(assignment, data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        try:
            services.score(assignment, request.user, data.get("scores", assignment.scores),
                           data.get("comment", assignment.comment), data.get("summary", assignment.summary))
        except ValidationError as exc:
            raise serializers.ValidationError({"scores": exc.messages}) from exc
        except services.CallError as exc:
            return _conflict(exc)
        assignment.refresh_from_db()
        return Response(ReviewSerializer(assignment).data)

    @extend_schema(request=ConflictSerializer, responses={204: None})
    @action(detail=True, methods=["post"], serializer_class=ConflictSerializer)
    def conflict(self, request, pk=None):
        """The reviewer declares a conflict: the application is no longer theirs to see."""
        assignment = self._own()
        serializer = ConflictSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        services.declare_conflict(assignment, request.user, serializer.validated_data.get("note", ""))
        return Response(status=204)
