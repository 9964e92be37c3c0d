from django.urls import path

from clusters.accounting import request_views, views

app_name = "accounting"

urlpatterns = [
    path("organizations/<slug:slug>/accounting/settings/", views.AccountingSettingsView.as_view(), name="settings"),
    path("capacity/reservation-requests/", request_views.ReservationRequestListView.as_view(), name="request_list"),
    path("capacity/reservation-requests/<int:pk>/", request_views.ReservationRequestView.as_view(),
         name="request_detail"),
    path("capacity/reservation-requests/<int:pk>/fulfil/", request_views.ReservationRequestFulfilView.as_view(),
         name="request_fulfil"),
    path("capacity/reservation-requests/<int:pk>/decline/", request_views.ReservationRequestDeclineView.as_view(),
         name="request_decline"),
]
