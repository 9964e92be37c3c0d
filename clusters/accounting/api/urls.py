from rest_framework.routers import DefaultRouter

from clusters.accounting.api import views
from portal.core.api.root import API_APPS

app_name = "accounting-api"

router = DefaultRouter()
router.register("reservation-checks", views.ReservationCheckViewSet)
router.register("settings", views.AccountingSettingsViewSet)
router.register("reservation-requests", views.ReservationRequestViewSet)
urlpatterns = router.urls

if ("accounting", "accounting-api:api-root") not in API_APPS:
    API_APPS.append(("accounting", "accounting-api:api-root"))
