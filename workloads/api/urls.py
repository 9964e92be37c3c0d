from rest_framework.routers import DefaultRouter

from portal.core.api.root import API_APPS
from workloads.api import views

app_name = "workloads-api"

router = DefaultRouter()
router.register("workloads", views.WorkloadViewSet)
router.register("quotas", views.InstanceQuotaViewSet)
router.register("reservations", views.CapacityReservationViewSet)
router.register("quota-requests", views.QuotaChangeRequestViewSet)
urlpatterns = router.urls

if ("workloads", "workloads-api:api-root") not in API_APPS:
    API_APPS.append(("workloads", "workloads-api:api-root"))
