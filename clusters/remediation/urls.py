"""Remediation pages: the health page's panel, proposals, an action and its consent, the organization's policy."""
from django.urls import path

from clusters.remediation import views

app_name = "remediation"

urlpatterns = [
    path("clusters/<int:pk>/remediation/", views.ClusterPanelView.as_view(), name="cluster_panel"),
    path("clusters/<int:pk>/remediation/propose/", views.ProposeView.as_view(), name="action_propose"),
    path("remediation/<int:pk>/", views.ActionView.as_view(), name="action_detail"),
    path("remediation/<int:pk>/approve/", views.ApproveView.as_view(), name="action_approve"),
    path("remediation/<int:pk>/decline/", views.DeclineView.as_view(), name="action_decline"),
    path("remediation/<int:pk>/cancel/", views.CancelView.as_view(), name="action_cancel"),
    path("remediation/<int:pk>/support-case/", views.SupportCaseView.as_view(), name="action_support_case"),
    path("organizations/<int:org_pk>/remediation-policy/", views.PolicyView.as_view(), name="policy_edit"),
    path("remediation/policy-changes/<int:pk>/approve/", views.PolicyChangeApproveView.as_view(),
         name="policy_change_approve"),
    path("remediation/policy-changes/<int:pk>/decline/", views.PolicyChangeDeclineView.as_view(),
         name="policy_change_decline"),
]
