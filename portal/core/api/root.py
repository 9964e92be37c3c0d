"""The API root: one index of every app's API, so a client discovers them from /api/."""
from django.conf import settings
from django.http import JsonResponse
from django.urls import reverse as reverse_url
from django.views.defaults import page_not_found
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from knox.models import get_token_model
from rest_framework import serializers
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.decorators import api_view
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.throttling import ScopedRateThrottle
from rest_framework.views import APIView

from portal.core.audit import recording as audit
from portal.core.audit.auth import token_label
from portal.core.audit.models import AuditKind
from portal.core.factors import devices, tokens

# Each app adds (name, url name of its router root) here through its api/urls.py import.
API_APPS = [("portal", "portal-api:api-root"), ("interactions", "interactions-api:api-root"), ("clusters", "clusters-api:api-root")]


@extend_schema(exclude=True)
@api_view(["GET"])
def api_root(request, format=None):
    return Response({name: reverse(url_name, request=request, format=format) for name, url_name in API_APPS})


class ObtainTokenView(APIView):
    """Exchange a username and password for an API token that expires (``REST_KNOX["TOKEN_TTL"]``) and
    is revoked when the user signs out; rate-limited (the "token" scope)."""

    throttle_scope = "token"
    throttle_classes = [ScopedRateThrottle]
    authentication_classes = []
    permission_classes = []
    serializer_class = AuthTokenSerializer

    @extend_schema(
        request=AuthTokenSerializer,
        responses={200: inline_serializer("ApiToken", {"token": serializers.CharField(),
                                                       "expiry": serializers.DateTimeField()}),
                   400: OpenApiResponse(description="Wrong username or password."),
                   403: OpenApiResponse(description="A second factor is required and was not given.")},
    )
    def post(self, request):
        serializer = AuthTokenSerializer(data=request.data, context={"request": request})
        serializer.is_valid(raise_exception=True)
        user = serializer.validated_data["user"]
        refusal = second_factor_refusal(request, user)
        if refusal is not None:
            return refusal
        instance, token = tokens.issue(user, request)
        return Response({"token": token, "expiry": instance.expiry})


def second_factor_refusal(request, user):
    """Creating an API token is a protected action: with a second factor required, the request carries a current
    code (``otp``) of the person's authenticator, or an unused recovery code."""
    if not settings.SECOND_FACTOR_REQUIRED:
        return None
    device, kind = devices.verify(user, str(request.data.get("otp", "")))
    audit.record(AuditKind.SECOND_FACTOR, request=request, user=user,
                 organization_id=audit.customer_organization_id(user), method=kind or "code",
                 target=request.path, outcome="verified" if device else "refused")
    if device is not None:
        return None
    if devices.has_passkey(user) and not devices.has_authenticator(user):
        # A passkey answers only in the browser: the token is made there, with no recovery code spent.
        detail = ("Creating an API token needs a second factor, and yours is a passkey, which only the browser can "
                  f"present: confirm it and create the token at {request.build_absolute_uri(reverse_url('factors:api_tokens'))}.")
    elif devices.has_factor(user):
        detail = "Creating an API token needs a second factor: send the code your authenticator shows now as \"otp\"."
    else:
        detail = "Creating an API token needs a second factor: set one up in the portal first."
    return Response({"detail": detail, "code": "second_factor_required"}, status=403)


class RevokeTokenView(APIView):
    """Sign the API client out: the token that made this request stops working (POST)."""

    @extend_schema(request=None, responses={204: OpenApiResponse(description="Revoked.")})
    def post(self, request):
        if not isinstance(request.auth, get_token_model()):
            return Response({"detail": "This request was not made with an API token; sign out instead."}, status=400)
        audit.record(AuditKind.TOKEN_REVOKED, request=request, user=request.user,
                     organization_id=audit.customer_organization_id(request.user), method=token_label(request.auth),
                     outcome="ok")
        request.auth.delete()
        return Response(status=204)


def not_found(request, exception=None):
    """404 in the API's own shape (JSON) for API paths no route matches; the usual page elsewhere."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "Not found."}, status=404)
    return page_not_found(request, exception)
