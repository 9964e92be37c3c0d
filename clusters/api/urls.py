from rest_framework.routers import DefaultRouter

from clusters.api import views

app_name = "clusters-api"

router = DefaultRouter()
router.register("blueprints", views.BlueprintViewSet)
router.register("clusters", views.ClusterViewSet)
router.register("launch-jobs", views.LaunchJobViewSet)
router.register("stack-events", views.StackEventViewSet)
urlpatterns = router.urls

