from django.urls import path

from portal.core.audit import views

app_name = "audit"
urlpatterns = [
    path("audit/", views.AuditEventListView.as_view(), name="event_list"),
]
