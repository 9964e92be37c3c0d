from rest_framework.routers import DefaultRouter

from workloads.api import interactions

app_name = "interactions-api"

router = DefaultRouter()
router.register("interactions", interactions.InteractionViewSet)
router.register("enablement-sessions", interactions.EnablementSessionViewSet)
router.register("enablement-attendances", interactions.EnablementAttendanceViewSet)
router.register("challenge-tags", interactions.ChallengeTagViewSet)
urlpatterns = router.urls
