from django.urls import path

from workloads.views import quota, workload

app_name = "workloads"

urlpatterns = [
    path("workloads/", workload.WorkloadListView.as_view(), name="workload_list"),
    path("workloads/new/", workload.WorkloadEditView.as_view(), name="workload_add"),
    path("workloads/<int:pk>/", workload.WorkloadView.as_view(), name="workload_detail"),
    path("workloads/<int:pk>/edit/", workload.WorkloadEditView.as_view(), name="workload_edit"),
    path("workloads/<int:pk>/history/", workload.WorkloadHistoryView.as_view(), name="workload_history"),
    path("workloads/<int:pk>/sections/<slug:section>/", workload.WorkloadSectionView.as_view(), name="workload_section"),
    path("quotas/", quota.QuotaListView.as_view(), name="quota_list"),
    path("quotas/new/", quota.QuotaEditView.as_view(), name="quota_add"),
    path("quotas/<int:pk>/edit/", quota.QuotaEditView.as_view(), name="quota_edit"),
    path("reservations/", quota.ReservationListView.as_view(), name="reservation_list"),
    path("reservations/new/", quota.ReservationEditView.as_view(), name="reservation_add"),
    path("reservations/<int:pk>/edit/", quota.ReservationEditView.as_view(), name="reservation_edit"),
    path("quota-requests/", quota.ChangeRequestListView.as_view(), name="changerequest_list"),
    path("quota-requests/new/", quota.ChangeRequestEditView.as_view(), name="changerequest_add"),
    path("quota-requests/<int:pk>/", quota.ChangeRequestView.as_view(), name="changerequest_detail"),
    path("quota-requests/<int:pk>/edit/", quota.ChangeRequestEditView.as_view(), name="changerequest_edit"),
    path("quota-requests/<int:pk>/decide/", quota.ChangeRequestDecideView.as_view(), name="changerequest_decide"),
]
