"""API routes of enablement sessions and attendance (namespace "enablement-api"), served under
``/api/interactions/`` beside the interactions' routes, where they have always been."""
from rest_framework.routers import SimpleRouter

from workloads.enablement.api import views

app_name = "enablement-api"

router = SimpleRouter()
router.register("enablement-sessions", views.EnablementSessionViewSet)
router.register("enablement-attendances", views.EnablementAttendanceViewSet)
urlpatterns = router.urls
