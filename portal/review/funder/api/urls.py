from rest_framework.routers import DefaultRouter

from portal.api.root import API_APPS
from portal.review.funder.api import views

app_name = "funder-api"

router = DefaultRouter()
router.register("reports", views.FunderReportViewSet)
router.register("parts", views.FunderReportPartViewSet)
router.register("comments", views.FunderReportCommentViewSet)
urlpatterns = router.urls

if ("funder", "funder-api:api-root") not in API_APPS:
    API_APPS.append(("funder", "funder-api:api-root"))
