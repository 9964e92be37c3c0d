from django.urls import path
from rest_framework.routers import DefaultRouter

from portal.core.api.root import API_APPS
from portal.review.api import views

app_name = "review-api"


class ReviewRouter(DefaultRouter):
    """Lists the overview (a single object, not a collection) in the API root beside the registered viewsets."""

    def get_api_root_view(self, api_urls=None):
        api_root_dict = {"overview": "overview"}
        list_name = self.routes[0].name
        for prefix, _viewset, basename in self.registry:
            api_root_dict[prefix] = list_name.format(basename=basename)
        return self.APIRootView.as_view(api_root_dict=api_root_dict)


router = ReviewRouter()
router.register("reviews", views.WeeklyReviewViewSet)
urlpatterns = [path("overview/", views.OverviewView.as_view(), name="overview"), *router.urls]

if ("review", "review-api:api-root") not in API_APPS:
    API_APPS.append(("review", "review-api:api-root"))
