from rest_framework.routers import DefaultRouter

from portal.api.root import API_APPS
from portal.review.api import views

app_name = "review-api"

router = DefaultRouter()
router.register("overview", views.OverviewViewSet, basename="overview")
router.register("reviews", views.WeeklyReviewViewSet)
urlpatterns = router.urls

if ("review", "review-api:api-root") not in API_APPS:
    API_APPS.append(("review", "review-api:api-root"))
