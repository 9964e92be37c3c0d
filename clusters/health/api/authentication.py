"""Per-cluster ingestion tokens: ``Authorization: Bearer gh<cluster>.<secret>``."""
from __future__ import annotations

from django.contrib.auth.models import AnonymousUser
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions, permissions

from clusters.health import services
from clusters.health.models import ClusterHealthConfig


class ClusterTokenAuthentication(authentication.BaseAuthentication):
    """Authenticates an exporter pushing for one cluster; ``request.auth`` is its ClusterHealthConfig."""

    keyword = "Bearer"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).decode("latin-1").split()
        if not header or header[0] != self.keyword:
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed("Authorization: Bearer <cluster token>")
        config = services.config_for_token(header[1])
        if config is None:
            raise exceptions.AuthenticationFailed("invalid cluster token")
        return AnonymousUser(), config

    def authenticate_header(self, request):
        return self.keyword


class HasClusterToken(permissions.BasePermission):
    def has_permission(self, request, view):
        return isinstance(request.auth, ClusterHealthConfig)


class ClusterTokenScheme(OpenApiAuthenticationExtension):
    target_class = "clusters.health.api.authentication.ClusterTokenAuthentication"
    name = "clusterToken"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer", "description": "A cluster's ingestion token (gh<cluster id>.<secret>)."}
