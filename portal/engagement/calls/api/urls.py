from rest_framework.routers import DefaultRouter

from portal.core.api.root import API_APPS
from portal.engagement.calls.api import views

app_name = "calls-api"

router = DefaultRouter()
router.register("calls", views.CallViewSet)
router.register("applications", views.ApplicationViewSet)
router.register("reviews", views.ReviewViewSet, basename="review")
urlpatterns = router.urls

if ("calls", "calls-api:api-root") not in API_APPS:
    API_APPS.append(("calls", "calls-api:api-root"))
