from django.urls import path

from clusters.accounting import views

app_name = "accounting"

urlpatterns = [
    path("organizations/<slug:slug>/accounting/settings/", views.AccountingSettingsView.as_view(), name="settings"),
]
