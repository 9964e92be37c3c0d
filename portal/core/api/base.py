"""Base API classes: every viewset reads and writes through the access policy.

A viewset declares ``queryset``, ``serializer_class`` and ``filterset_class``. Reads come from
``restrict(user, "view")``; a row outside it is a 404. Writing a visible row also needs "change"
(403 otherwise), and a new row's organization must be one the user may write in, checked again
inside the transaction that saves it.

Updates are optimistic (``portal.core.versions``): a detail GET answers an ``ETag``, and a PUT or PATCH with
``If-Match`` is checked against the row locked inside the saving transaction (412 when it changed).
"""
from __future__ import annotations

from django.db import transaction
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.exceptions import APIException, PermissionDenied
from rest_framework.response import Response

from portal.core import access, submissions, versions
from portal.core.api.scoping import PortalModelSerializer, PortalSerializerMixin, restrict_related_fields

__all__ = ["PortalModelSerializer", "PortalSerializerMixin", "PortalModelViewSet", "PortalReadOnlyViewSet",
           "PortalViewSetMixin", "IdempotentCreateMixin", "PortalUpdateMixin"]

READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
UPDATES = frozenset({"update", "partial_update"})


class PreconditionFailed(APIException):
    status_code = status.HTTP_412_PRECONDITION_FAILED
    default_code = "version_mismatch"


class PortalViewSetMixin:
    write_action = access.CHANGE

    def get_queryset(self):
        return self.queryset.all().restrict(self.request.user, access.VIEW)

    def get_serializer(self, *args, **kwargs):
        """Every serializer a viewset uses (the API and the browsable API's forms) gets its related
        fields scoped, whether or not it derives from ``PortalSerializerMixin``."""
        serializer = super().get_serializer(*args, **kwargs)
        if not isinstance(serializer, PortalSerializerMixin):
            target = serializer.child if isinstance(serializer, serializers.ListSerializer) else serializer
            if isinstance(target, serializers.Serializer):
                restrict_related_fields(target.fields, self.request.user)
        return serializer

    def check_object_permissions(self, request, obj):
        super().check_object_permissions(request, obj)
        if request.method not in READ_METHODS and not access.can(request.user, self.write_action, obj):
            raise PermissionDenied(access.refusal(obj, self.write_action))

    def get_object(self):
        obj = super().get_object()
        if self.action in UPDATES:
            # Lock the row for the saving transaction (``update``), then read it again as stored now: the
            # version is checked, and the serializer writes over, the latest committed row.
            versions.lock(obj)
            obj = self._updating = super().get_object()
            current = self.version_of(obj)
            if not versions.if_match_holds(self.request.headers.get("If-Match"), current):
                raise PreconditionFailed({
                    "detail": "This row changed since the version you sent in If-Match. GET it again, re-apply "
                              "your change and send the new ETag.",
                    "code": "version_mismatch", "etag": current,
                })
        return obj

    def version_of(self, instance) -> str:
        """The ``ETag`` of ``instance``: the version of the fields this endpoint writes."""
        serializer = self.get_serializer(instance)
        return versions.etag(instance, versions.serializer_fields(serializer, type(instance)))

    def retrieve(self, request, *args, **kwargs):
        instance = self.get_object()
        response = Response(self.get_serializer(instance).data)
        if hasattr(self, "update") and {"put", "patch"} & set(self.http_method_names):
            response["ETag"] = self.version_of(instance)
        return response

    def organization_id_for(self, instance) -> int | None:
        return getattr(instance, "organization_id", None)

    def _check_org(self, instance) -> None:
        if not access.can_in_organization(
            self.request.user, self.write_action, type(instance), self.organization_id_for(instance)
        ):
            raise PermissionDenied("You may not write in this organization.")
        self.refuse_archived(instance)

    def refuse_archived(self, instance) -> None:
        """A row written under an archived cycle (attendance of an archived session) is refused with the reason."""
        access.refuse_archived(instance, self.write_action)

    def perform_create(self, serializer):
        with transaction.atomic():
            instance = serializer.save()
            self._check_org(instance)
            self.after_save(instance, created=True)

    def perform_update(self, serializer):
        with transaction.atomic():
            instance = serializer.save()
            self._check_org(instance)
            self.after_save(instance, created=False)

    def after_save(self, instance, created: bool) -> None:
        """Hook for timeline entries and notifications, inside the saving transaction."""


class IdempotentCreateMixin:
    """A create honours ``Idempotency-Key``: a repeat answers the first create's status and body
    (``portal.core.submissions``). Put before DRF's ``CreateModelMixin``."""

    @submissions.idempotent
    def create(self, request, *args, **kwargs):
        return super().create(request, *args, **kwargs)


class PortalUpdateMixin(mixins.UpdateModelMixin):
    """PUT and PATCH inside one transaction, which holds the row locked by ``get_object`` until the save
    commits; the answer carries the row's new ``ETag``. (A mixin of its own: a viewset that defines
    ``update`` is routed PUT and PATCH.)"""

    def update(self, request, *args, **kwargs):
        with transaction.atomic():  # the lock taken in get_object is held until the save commits
            response = super().update(request, *args, **kwargs)
            if response.status_code < 300:
                saved = type(self._updating)._base_manager.get(pk=self._updating.pk)
                response["ETag"] = self.version_of(saved)
        return response


class PortalReadOnlyViewSet(PortalViewSetMixin, viewsets.ReadOnlyModelViewSet):
    pass


class PortalModelViewSet(PortalViewSetMixin, IdempotentCreateMixin, PortalUpdateMixin, viewsets.ModelViewSet):
    pass
