"""Root URL configuration."""
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_not_required
from django.urls import include, path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from portal.core import language, timeline_views, views
from portal.core.api.root import ObtainTokenView, RevokeTokenView, api_root, not_found
from portal.core.metrics.views import metrics
from portal.core.probes import healthz
from portal.core.sso.forms import SignInForm

portal_patterns = (
    [
        path("organizations/", views.OrganizationListView.as_view(), name="organization_list"),
        path("organizations/<slug:slug>/", views.OrganizationView.as_view(), name="organization_detail"),
        path("organizations/<slug:slug>/timeline/", timeline_views.TimelineView.as_view(), name="timeline"),
        path("lead/", views.LeadHomeView.as_view(), name="lead_home"),
    ],
    "portal",
)

urlpatterns = [
    path("", views.home, name="home"),
    path("", include(portal_patterns)),
    path("", include("workloads.urls")),
    path("", include("clusters.health.urls")),
    path("", include("portal.review.urls")),
    path("login/", auth_views.LoginView.as_view(redirect_authenticated_user=True, authentication_form=SignInForm),
         name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("language/", language.set_language, name="set_language"),
    path("healthz", healthz, name="healthz"),
    path("", include("portal.core.audit.urls")),
    path("", include("portal.core.factors.urls")),
    path("", include("portal.core.sso.urls")),
    path("metrics", metrics, name="metrics"),
    path("favicon.ico", login_not_required(RedirectView.as_view(url="/static/img/favicon.svg")), name="favicon"),
    path("admin/", admin.site.urls),
    path("api/", api_root, name="api-root"),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/auth/token/", ObtainTokenView.as_view(), name="api-token"),
    path("api/auth/token/revoke/", RevokeTokenView.as_view(), name="api-token-revoke"),
    path("api/portal/", include("portal.core.api.urls")),
    path("clusters/", include("clusters.urls")),
    path("api/clusters/", include("clusters.api.urls")),
    path("api/workloads/", include("workloads.api.urls")),
    path("api/review/", include("portal.review.api.urls")),
    path("", include("workloads.interactions.urls", namespace="interactions")),
    path("", include("workloads.enablement.urls", namespace="enablement")),
    path("api/interactions/", include("workloads.interactions.desk.api.urls", namespace="interactions-api")),
    path("api/interactions/", include("workloads.enablement.api.urls", namespace="enablement-api")),
    path("api/health/", include("clusters.health.api.urls")),
    path("", include("portal.engagement.urls")),
    path("api/engagement/", include("portal.engagement.api.urls")),
    path("", include("portal.engagement.calls.urls")),
    path("api/calls/", include("portal.engagement.calls.api.urls")),
    path("", include("portal.review.funder.urls")),
    path("api/funder/", include("portal.review.funder.api.urls")),
    path("", include("clusters.remediation.urls")),
    path("", include("clusters.accounting.urls")),
    path("api/accounting/", include("clusters.accounting.api.urls")),
    path("api/health/", include("clusters.remediation.api.urls")),
]

handler404 = not_found
