"""Pages of enablement sessions and their attendance (namespace "enablement")."""
from django.urls import path

from workloads.enablement import views

app_name = "enablement"

urlpatterns = [
    path("enablement/", views.EnablementListView.as_view(), name="enablement_list"),
    path("enablement/new/", views.EnablementEditView.as_view(), name="enablement_add"),
    path("enablement/<int:pk>/", views.EnablementView.as_view(), name="enablement_detail"),
    path("enablement/<int:pk>/edit/", views.EnablementEditView.as_view(), name="enablement_edit"),
    path("enablement/<int:pk>/attendance/", views.AttendanceAddView.as_view(), name="enablement_attendance"),
]
