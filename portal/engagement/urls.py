from django.urls import path
from django.views.decorators.http import require_GET

from portal.engagement import views, views_cycles, views_outcomes, views_slack

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
    path("cycles/", views_cycles.CycleListView.as_view(), name="cycle_list"),
    path("cycles/start-next/", views_cycles.StartNextCycleView.as_view(), name="cycle_start_next"),
    path("cycles/<int:pk>/", views_cycles.CycleView.as_view(), name="cycle_detail"),
    path("cycles/<int:pk>/schedule/", views_cycles.ScheduleView.as_view(), name="cycle_schedule"),
    path("cycles/<int:pk>/report.pdf", require_GET(views_cycles.cycle_report_pdf), name="cycle_report_pdf"),
    path("slack/interactivity/", views_slack.interactivity, name="slack_interactivity"),
    path("slack/commands/", views_slack.command, name="slack_command"),
    path("cycles/<int:pk>/report.csv", require_GET(views_cycles.cycle_report_csv), name="cycle_report_csv"),
]
