from django.urls import path
from django.views.decorators.http import require_GET

from portal.review.funder import views

app_name = "funder"

urlpatterns = [
    path("funder-reports/", views.FunderReportListView.as_view(), name="report_list"),
    path("funder-reports/add/", views.FunderReportAddView.as_view(), name="report_add"),
    path("funder-reports/<int:pk>/", views.FunderReportView.as_view(), name="report_detail"),
    path("funder-reports/<int:pk>/issue/", views.FunderReportIssueView.as_view(), name="report_issue"),
    path("funder-reports/<int:pk>/send/", views.FunderReportSendView.as_view(), name="report_send"),
    path("funder-reports/<int:pk>/correct/", views.FunderReportCorrectView.as_view(), name="report_correct"),
    path("funder-reports/<int:pk>/report.pdf", require_GET(views.report_pdf), name="report_pdf"),
    path("funder-reports/<int:pk>/report.xlsx", require_GET(views.report_xlsx), name="report_xlsx"),
    path("funder-reports/parts/<int:pk>/part.pdf", require_GET(views.part_pdf), name="part_pdf"),
    path("funder-reports/parts/<int:pk>/part.xlsx", require_GET(views.part_xlsx), name="part_xlsx"),
    path("funder-reports/parts/<int:pk>/edit/", views.FunderReportPartEditView.as_view(), name="part_edit"),
    path("funder-reports/parts/<int:pk>/comment/", views.FunderReportCommentView.as_view(), name="part_comment"),
]
