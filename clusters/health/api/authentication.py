"""Per-cluster ingestion tokens: ``Authorization: Bearer gh<cluster>.<secret>``."""
from __future__ import annotations

from django.contrib.auth.models import AnonymousUser
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions, permissions

from clusters.health import services
from clusters.health.models import ClusterHealthConfig
from portal import access


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
    """A cluster token; a write (a push) also needs the cluster's cycle not to be archived (its health is
    history then), refused here with the reason before any of the body is read."""

    message = None

    def has_permission(self, request, view):
        if not isinstance(request.auth, ClusterHealthConfig):
            return False
        if request.method not in permissions.SAFE_METHODS:
            self.message = access.archived_refusal(request.auth)
            return self.message is None
        return True


class ClusterTokenScheme(OpenApiAuthenticationExtension):
    target_class = "clusters.health.api.authentication.ClusterTokenAuthentication"
    name = "clusterToken"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer", "description": "A cluster's ingestion token (gh<cluster id>.<secret>)."}
