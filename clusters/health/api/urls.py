from django.urls import path
from rest_framework.routers import DefaultRouter

from clusters.health.api import agent, alerts, validation, views
from portal.core.api.root import API_APPS

app_name = "health-api"

router = DefaultRouter()
router.register("reports", views.HealthReportViewSet)
router.register("nodes", views.NodeHealthViewSet)
router.register("faults", views.GpuFaultViewSet)
router.register("validation-runs", views.ValidationRunViewSet)
router.register("pushes", views.HealthPushViewSet)
router.register("validations", validation.ValidationJobViewSet)
urlpatterns = [
    path("clusters/<int:cluster_id>/metrics/", views.IngestView.as_view(), name="ingest"),
    path("clusters/<int:cluster_id>/metrics/<int:push_id>/", views.PushStatusView.as_view(), name="push-status"),
    path("clusters/<int:cluster_id>/rotate-token/", views.RotateTokenView.as_view(), name="rotate-token"),
    path("clusters/<int:cluster_id>/validation-trend/", validation.ValidationTrendView.as_view(), name="validation-trend"),
    path("clusters/<int:cluster_id>/agent/poll/", agent.AgentPollView.as_view(), name="agent-poll"),
    path("clusters/<int:cluster_id>/agent/items/<int:item_id>/result/", agent.AgentResultView.as_view(),
         name="agent-result"),
    path("validations/<int:pk>/output/", validation.ValidationOutputView.as_view(), name="validation-output"),
    path("alerts/sns/", alerts.SnsAlertView.as_view(), name="alerts-sns"),
    *router.urls,
]

if ("health", "health-api:api-root") not in API_APPS:
    API_APPS.append(("health", "health-api:api-root"))
