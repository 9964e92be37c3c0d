"""Remediation API: list and read actions through the access policy; propose (``POST /api/health/remediations/``,
honouring ``Idempotency-Key``), approve, decline and cancel through the remediation services."""
from __future__ import annotations

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.decorators import action as route
from rest_framework.exceptions import PermissionDenied
from rest_framework.response import Response

from clusters.remediation import consent, services
from clusters.remediation.api.serializers import (
    DeclineSerializer,
    ProposeSerializer,
    RemediationActionSerializer,
    RemediationPolicyChangeSerializer,
)
from clusters.remediation.models import RemediationAction, RemediationPolicyChange
from portal.core import access, submissions
from portal.core.api.base import PortalReadOnlyViewSet


class RemediationActionViewSet(PortalReadOnlyViewSet):
    """Node remediation actions (reboot, replace, drain) with their steps and the faults they answer."""

    queryset = RemediationAction.objects.prefetch_related("steps", "fault_rows")
    serializer_class = RemediationActionSerializer
    filterset_fields = ["cluster", "state", "kind"]
    ordering_fields = ["proposed_at"]

    @property
    def write_action(self) -> str:
        """Approving and declining is the customer's consent (approve); proposing and cancelling is a change."""
        return access.APPROVE if self.action in ("approve", "decline") else access.CHANGE

    def get_serializer_class(self):
        return {"create": ProposeSerializer, "decline": DeclineSerializer}.get(self.action, RemediationActionSerializer)

    def _answer(self, action, code=status.HTTP_200_OK) -> Response:
        action = self.queryset.get(pk=action.pk)
        return Response(RemediationActionSerializer(action, context=self.get_serializer_context()).data, status=code)

    @extend_schema(request=ProposeSerializer, responses={201: RemediationActionSerializer})
    @submissions.idempotent
    def create(self, request, *args, **kwargs):
        """Propose an action; 201 for a new one (possibly refused: ``refused_rule`` says which rule), 200 when
        the request lands on an open action for the same nodes and kind, or on the same ``Idempotency-Key``."""
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        key = request.headers.get(submissions.HEADER, "").strip()
        try:
            action, created = services.propose(data["cluster"], kind=data["kind"], nodes=data["nodes"],
                                               actor=request.user, reason=data["reason"],
                                               key=f"api:{request.user.pk}:{key}" if key else "")
        except DjangoPermissionDenied as exc:
            raise PermissionDenied(str(exc)) from exc
        return self._answer(action, status.HTTP_201_CREATED if created else status.HTTP_200_OK)

    def _decide(self, request, do):
        action = self.get_object()
        try:
            do(action)
        except DjangoPermissionDenied as exc:
            raise PermissionDenied(str(exc)) from exc
        except services.RequestRefused as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return self._answer(action)

    @extend_schema(request=None, responses={200: RemediationActionSerializer})
    @route(detail=True, methods=["post"])
    def approve(self, request, pk=None):
        """A customer engineer of the organization consents; the worker starts."""
        return self._decide(request, lambda a: services.approve(a, request.user))

    @extend_schema(request=DeclineSerializer, responses={200: RemediationActionSerializer})
    @route(detail=True, methods=["post"])
    def decline(self, request, pk=None):
        serializer = DeclineSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        return self._decide(request, lambda a: services.decline(a, request.user, serializer.validated_data["why"]))

    @extend_schema(request=None, responses={200: RemediationActionSerializer})
    @route(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        return self._decide(request, lambda a: services.cancel(a, request.user))


class RemediationPolicyChangeViewSet(PortalReadOnlyViewSet):
    """Changes of an organization's consent that widen it: a customer engineer of the organization (not staff, not
    the proposer) approves or declines one; approving applies it."""

    queryset = RemediationPolicyChange.objects.select_related("proposed_by", "decided_by")
    serializer_class = RemediationPolicyChangeSerializer
    filterset_fields = ["organization", "state"]
    ordering_fields = ["proposed_at"]
    write_action = access.APPROVE

    def get_serializer_class(self):
        return DeclineSerializer if self.action == "decline" else RemediationPolicyChangeSerializer

    def _decide(self, do):
        change = self.get_object()
        try:
            do(change)
        except DjangoPermissionDenied as exc:
            raise PermissionDenied(str(exc)) from exc
        except consent.ChangeClosed as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        change = self.queryset.get(pk=change.pk)
        return Response(RemediationPolicyChangeSerializer(change, context=self.get_serializer_context()).data)

    @extend_schema(request=None, responses={200: RemediationPolicyChangeSerializer})
    @route(detail=True, methods=["post"])
    def approve(self, request, pk=None):
        """A customer engineer of the organization consents: the policy changes."""
        return self._decide(lambda c: consent.approve(c, request.user))

    @extend_schema(request=DeclineSerializer, responses={200: RemediationPolicyChangeSerializer})
    @route(detail=True, methods=["post"])
    def decline(self, request, pk=None):
        serializer = DeclineSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        return self._decide(lambda c: consent.decline(c, request.user, serializer.validated_data["why"]))
