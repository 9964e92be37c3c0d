"""Related fields and filters scoped by the access policy: what a user may name is what the policy shows.

``restrict_related_fields`` is the one mechanism: the base serializer (``PortalSerializerMixin``) calls
it when its fields are built, and the base viewset calls it on any serializer it hands out, so the API
and the browsable API's forms list and accept only rows the caller may see.
"""
from __future__ import annotations

from django.contrib.auth import get_user_model
from rest_framework import serializers

from portal.core import access


def visible_users(user):
    """Users a caller may name in a related field (owner, lead SA): everyone for staff and program
    managers, otherwise the members of the caller's own organizations."""
    users = get_user_model().objects.all()
    if access.is_staff(user) or access.is_program_manager(user):
        return users
    org_ids = access.organization_ids(user, access.VIEW)
    if not org_ids:
        return users.none()
    return users.filter(memberships__organization_id__in=org_ids).distinct()


def _scoped(queryset, user):
    if queryset is None:
        return None
    if queryset.model is get_user_model():
        return queryset.filter(pk__in=visible_users(user).values("pk"))
    if hasattr(queryset, "restrict"):
        return queryset.all().restrict(user, access.VIEW)
    return queryset


def restrict_related_fields(fields, user) -> None:
    """Narrow every writable related field (and those of nested serializers) to the rows the access
    policy shows ``user``: the browsable API's <select> lists only those, and naming any other row is
    "does not exist", the same answer as for a row that does not exist."""
    for field in fields.values():
        if isinstance(field, serializers.ManyRelatedField):
            field = field.child_relation
        if isinstance(field, serializers.RelatedField):
            if not field.read_only and getattr(field, "queryset", None) is not None:
                field.queryset = _scoped(field.queryset, user)
        elif isinstance(field, serializers.ListSerializer):
            restrict_related_fields(field.child.fields, user)
        elif isinstance(field, serializers.Serializer):
            restrict_related_fields(field.fields, user)


class PortalSerializerMixin:
    """Base of the portal's serializers: related fields scoped to the request's user."""

    def get_fields(self):
        fields = super().get_fields()
        request = self.context.get("request")
        restrict_related_fields(fields, getattr(request, "user", None))
        return fields


class PortalModelSerializer(PortalSerializerMixin, serializers.ModelSerializer):
    pass


