from django.urls import path
from django.views.decorators.http import require_GET

from portal.engagement.views import cycles, escalations, outcomes, slack

app_name = "engagement"

urlpatterns = [
    path("escalations/", escalations.EscalationListView.as_view(), name="escalation_list"),
    path("escalations/<int:pk>/", escalations.EscalationView.as_view(), name="escalation_detail"),
    path("escalations/<int:pk>/<slug:transition>/", escalations.EscalationTransitionView.as_view(),
         name="escalation_transition"),
    path("outcomes/", outcomes.OutcomeListView.as_view(), name="outcome_list"),
    path("organizations/<slug:slug>/outcomes/", outcomes.OutcomesView.as_view(), name="outcomes"),
    path("organizations/<slug:org>/trained-models/add/", outcomes.TrainedModelEditView.as_view(),
         name="trainedmodel_add"),
    path("trained-models/<int:pk>/edit/", outcomes.TrainedModelEditView.as_view(), name="trainedmodel_edit"),
    path("cycles/", cycles.CycleListView.as_view(), name="cycle_list"),
    path("cycles/start-next/", cycles.StartNextCycleView.as_view(), name="cycle_start_next"),
    path("cycles/<int:pk>/", cycles.CycleView.as_view(), name="cycle_detail"),
    path("cycles/<int:pk>/schedule/", cycles.ScheduleView.as_view(), name="cycle_schedule"),
    path("cycles/<int:pk>/report.pdf", require_GET(cycles.cycle_report_pdf), name="cycle_report_pdf"),
    path("slack/interactivity/", slack.interactivity, name="slack_interactivity"),
    path("slack/commands/", slack.command, name="slack_command"),
    path("cycles/<int:pk>/report.csv", require_GET(cycles.cycle_report_csv), name="cycle_report_csv"),
]
