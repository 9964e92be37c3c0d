"""API routes of interactions and the challenge taxonomy (namespace "interactions-api")."""
from rest_framework.routers import DefaultRouter

from workloads.interactions.desk.api import views

app_name = "interactions-api"

router = DefaultRouter()
router.register("interactions", views.InteractionViewSet)
router.register("challenge-tags", views.ChallengeTagViewSet)
urlpatterns = router.urls
