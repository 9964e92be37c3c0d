from django.urls import path

from portal.engagement import views, views_outcomes

app_name = "engagement"

urlpatterns = [
    path("escalations/", views.EscalationListView.as_view(), name="escalation_list"),
    path("escalations/<int:pk>/", views.EscalationView.as_view(), name="escalation_detail"),
    path("escalations/<int:pk>/<slug:transition>/", views.EscalationTransitionView.as_view(),
         name="escalation_transition"),
    path("outcomes/", views_outcomes.OutcomeListView.as_view(), name="outcome_list"),
    path("organizations/<slug:slug>/outcomes/", views_outcomes.OutcomesView.as_view(), name="outcomes"),
    path("organizations/<slug:org>/trained-models/add/", views_outcomes.TrainedModelEditView.as_view(),
         name="trainedmodel_add"),
    path("trained-models/<int:pk>/edit/", views_outcomes.TrainedModelEditView.as_view(), name="trainedmodel_edit"),
]
