"""The API root: one index of every app's API, so a client discovers them from /api/."""
from drf_spectacular.utils import extend_schema
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.decorators import api_view
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.throttling import ScopedRateThrottle

# Each app adds (name, url name of its router root) here through its api/urls.py import.
API_APPS = [("portal", "portal-api:api-root"), ("interactions", "interactions-api:api-root"), ("clusters", "clusters-api:api-root")]


@extend_schema(exclude=True)
@api_view(["GET"])
def api_root(request, format=None):
    return Response({name: reverse(url_name, request=request, format=format) for name, url_name in API_APPS})


class ObtainTokenView(ObtainAuthToken):
    """Exchange a username and password for an API token; rate-limited (the "token" scope)."""

    throttle_scope = "token"
    throttle_classes = [ScopedRateThrottle]
    authentication_classes = []
    permission_classes = []
