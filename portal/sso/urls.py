from django.urls import path

from portal.sso import views

app_name = "sso"
urlpatterns = [
    path("login/sso/", views.StartView.as_view(), name="start"),
    path("login/sso/callback/", views.CallbackView.as_view(), name="callback"),
]
