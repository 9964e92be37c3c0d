from django.urls import path

from portal.factors import views

app_name = "factors"
urlpatterns = [
    path("account/second-factor/", views.FactorsView.as_view(), name="factors"),
    path("account/second-factor/setup/", views.SetupView.as_view(), name="setup"),
    path("account/second-factor/verify/", views.VerifyView.as_view(), name="verify"),
]
