from django.urls import path

from clusters.health import views

app_name = "health"

urlpatterns = [
    path("health/", views.ProgramHealthView.as_view(), name="program_health"),
    path("clusters/<int:pk>/health/", views.ClusterHealthView.as_view(), name="cluster_health"),
    path("clusters/<int:pk>/health/settings/", views.ClusterHealthSettingsView.as_view(), name="cluster_health_settings"),
    path("clusters/<int:pk>/health/token/", views.RotateTokenView.as_view(), name="rotate_token"),
    path("clusters/<int:pk>/validation/new/", views.ValidationRunCreateView.as_view(), name="validationrun_add"),
    path("faults/<int:pk>/interaction/", views.GpuFaultLinkView.as_view(), name="gpufault_link"),
    path("validation/<int:pk>/", views.ValidationRunView.as_view(), name="validationrun_detail"),
    path("clusters/<int:pk>/validations/", views.ValidationPanelView.as_view(), name="validationjob_panel"),
    path("clusters/<int:pk>/validations/start/", views.ValidationStartView.as_view(), name="validationjob_add"),
    path("validations/<int:pk>/", views.ValidationJobView.as_view(), name="validationjob_detail"),
    path("validations/<int:pk>/cancel/", views.ValidationCancelView.as_view(), name="validationjob_cancel"),
]
