from django.urls import path

from clusters import views

app_name = "clusters"

urlpatterns = [
    path("", views.ClusterListView.as_view(), name="cluster_list"),
    path("launch-day/", views.LaunchDayView.as_view(), name="launch_day"),
    path("blueprints/", views.BlueprintListView.as_view(), name="blueprint_list"),
    path("blueprints/<slug:slug>/", views.BlueprintView.as_view(), name="blueprint_detail"),
    path("blueprints/<slug:slug>/launch/", views.LaunchView.as_view(), name="launch"),
    path("<int:pk>/", views.ClusterView.as_view(), name="cluster_detail"),
    path("<int:pk>/progress/", views.cluster_progress, name="cluster_progress"),
    path("<int:pk>/pcluster.yaml", views.cluster_config, name="cluster_config"),
    path("<int:pk>/retry/", views.cluster_retry, name="cluster_retry"),
    path("<int:pk>/delete/", views.ClusterDeleteView.as_view(), name="cluster_delete"),
]
