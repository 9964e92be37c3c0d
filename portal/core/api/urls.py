from rest_framework.routers import DefaultRouter

from portal.core.api import views

app_name = "portal-api"

router = DefaultRouter()
router.register("organizations", views.OrganizationViewSet)
router.register("memberships", views.MembershipViewSet)
router.register("timeline", views.TimelineEntryViewSet)
urlpatterns = router.urls
