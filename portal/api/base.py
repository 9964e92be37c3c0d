"""Base API classes: every viewset reads and writes through the access policy.

A viewset declares ``queryset``, ``serializer_class`` and ``filterset_class``. Reads come from
``restrict(user, "view")``; a row outside it is a 404. Writing a visible row also needs "change"
(403 otherwise), and a new row's organization must be one the user may write in, checked again
inside the transaction that saves it.
"""
from __future__ import annotations

from django.db import transaction
from rest_framework import serializers, viewsets
from rest_framework.exceptions import PermissionDenied

from portal import access
from portal.api.scoping import PortalModelSerializer, PortalSerializerMixin, restrict_related_fields

__all__ = ["PortalModelSerializer", "PortalSerializerMixin", "PortalModelViewSet", "PortalReadOnlyViewSet",
           "PortalViewSetMixin"]

READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


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


class PortalReadOnlyViewSet(PortalViewSetMixin, viewsets.ReadOnlyModelViewSet):
    pass


class PortalModelViewSet(PortalViewSetMixin, viewsets.ModelViewSet):
    pass
