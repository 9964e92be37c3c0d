"""Per-cluster ingestion tokens: ``Authorization: Bearer gh<cluster>.<secret>``."""
from __future__ import annotations

from django.contrib.auth.models import AnonymousUser
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions, permissions

from clusters.health.ingest import service as services
from clusters.health.models import ClusterHealthConfig, ValidationJob
from clusters.health.validation import service as validation
from portal.core import access


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


class ValidationJobTokenAuthentication(authentication.BaseAuthentication):
    """Authenticates a validation job posting its outputs: ``Authorization: Bearer gv<job id>.<secret>``, the
    token the portal wrote into that job's script. It is scoped to the job in the URL, expires, and stops
    working when the job finishes; ``request.auth`` is the job."""

    keyword = "Bearer"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).decode("latin-1").split()
        if not header or header[0] != self.keyword:
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed("Authorization: Bearer <validation job token>")
        pk = request.parser_context["kwargs"].get("pk") if request.parser_context else None
        job = validation.job_for_token(int(pk), header[1]) if pk is not None else None
        if job is None:
            raise exceptions.AuthenticationFailed("invalid, expired or used-up validation job token")
        return AnonymousUser(), job

    def authenticate_header(self, request):
        return self.keyword


class HasValidationJobToken(permissions.BasePermission):
    def has_permission(self, request, view):
        return isinstance(request.auth, ValidationJob)


class ValidationJobTokenScheme(OpenApiAuthenticationExtension):
    target_class = "clusters.health.api.authentication.ValidationJobTokenAuthentication"
    name = "validationJobToken"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer",
                "description": "A validation job's upload token (gv<job id>.<secret>), written into its script."}
