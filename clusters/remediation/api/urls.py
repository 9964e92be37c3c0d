"""Remediation API routes, under /api/health/remediations/ (beside the health API they act on)."""
from rest_framework.routers import SimpleRouter

from clusters.remediation.api import views

app_name = "remediation-api"

router = SimpleRouter()
router.register("remediations", views.RemediationActionViewSet)
router.register("remediation-policy-changes", views.RemediationPolicyChangeViewSet)
urlpatterns = router.urls
