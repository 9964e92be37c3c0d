from django.urls import path

from portal.engagement.calls import views

app_name = "calls"

urlpatterns = [
    path("calls/", views.CallListView.as_view(), name="call_list"),
    path("calls/add/", views.CallEditView.as_view(), name="call_add"),
    path("calls/<int:pk>/", views.CallView.as_view(), name="call_detail"),
    path("calls/<int:pk>/edit/", views.CallEditView.as_view(), name="call_edit"),
    path("calls/<int:pk>/board/", views.CallBoardView.as_view(), name="call_board"),
    path("calls/<int:pk>/award/", views.CallAwardView.as_view(), name="call_award"),
    path("calls/<int:pk>/apply/<slug:org>/", views.ApplicationStartView.as_view(), name="application_start"),
    path("calls/applications/", views.ApplicationListView.as_view(), name="application_list"),
    path("calls/applications/<int:pk>/", views.ApplicationView.as_view(), name="application_detail"),
    path("calls/applications/<int:pk>/edit/", views.ApplicationEditView.as_view(), name="application_edit"),
    path("calls/applications/<int:pk>/submit/", views.ApplicationSubmitView.as_view(), name="application_submit"),
    path("calls/applications/<int:pk>/reopen/", views.ApplicationReopenView.as_view(), name="application_reopen"),
    path("calls/applications/<int:pk>/assign/", views.ApplicationAssignView.as_view(), name="application_assign"),
    path("calls/applications/<int:pk>/application.xlsx", views.ApplicationExportView.as_view(), name="application_export"),
    path("calls/reviews/", views.ReviewListView.as_view(), name="review_list"),
    path("calls/reviews/<int:pk>/", views.ReviewEditView.as_view(), name="review_edit"),
]
