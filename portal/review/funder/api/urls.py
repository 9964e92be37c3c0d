from rest_framework.routers import DefaultRouter

from portal.core.api.root import API_APPS
from portal.review.funder.api import views

app_name = "funder-api"

router = DefaultRouter()
router.register("reports", views.FunderReportViewSet, basename="report")
router.register("parts", views.FunderReportPartViewSet, basename="part")
router.register("comments", views.FunderReportCommentViewSet, basename="comment")
router.register("sendings", views.FunderReportSendingViewSet, basename="sending")
urlpatterns = router.urls

if ("funder", "funder-api:api-root") not in API_APPS:
    API_APPS.append(("funder", "funder-api:api-root"))
