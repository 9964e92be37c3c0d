from django.urls import path

from portal.engagement import views

app_name = "engagement"

urlpatterns = [
    path("escalations/", views.EscalationListView.as_view(), name="escalation_list"),
    path("escalations/<int:pk>/", views.EscalationView.as_view(), name="escalation_detail"),
    path("escalations/<int:pk>/<slug:transition>/", views.EscalationTransitionView.as_view(),
         name="escalation_transition"),
]
