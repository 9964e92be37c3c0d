from rest_framework.routers import DefaultRouter

from portal.core.api.root import API_APPS
from portal.engagement.api import views

app_name = "engagement-api"

router = DefaultRouter()
router.register("targets", views.EscalationTargetViewSet)
router.register("escalations", views.EscalationViewSet)
router.register("milestones", views.MilestoneViewSet)
router.register("trained-models", views.TrainedModelViewSet)
router.register("cycles", views.CycleViewSet)
urlpatterns = router.urls

if ("engagement", "engagement-api:api-root") not in API_APPS:
    API_APPS.append(("engagement", "engagement-api:api-root"))
