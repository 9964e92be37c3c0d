from django.urls import path

from portal.core.sso import admin_views, provider_views, views

app_name = "sso"
urlpatterns = [
    path("login/sso/", views.StartView.as_view(), name="start"),
    path("login/sso/callback/", views.CallbackView.as_view(), name="callback"),
    path("login/sso/saml/<int:pk>/metadata/", views.SamlMetadataView.as_view(), name="saml_metadata"),
    path("login/sso/saml/<int:pk>/acs/", views.SamlConsumerView.as_view(), name="saml_acs"),
    path("sso/providers/", provider_views.IdentityProviderListView.as_view(), name="provider_list"),
    path("sso/providers/new/", provider_views.IdentityProviderEditView.as_view(), name="provider_add"),
    path("sso/providers/<int:pk>/edit/", provider_views.IdentityProviderEditView.as_view(), name="provider_edit"),
    path("sso/administrators/", admin_views.AdministratorListView.as_view(), name="administrator_list"),
    path("sso/administrators/<int:pk>/remove/", admin_views.AdministratorRemoveView.as_view(),
         name="administrator_remove"),
]
