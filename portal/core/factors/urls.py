from django.urls import path

from portal.core.factors import passkey_views, token_views, views

app_name = "factors"
urlpatterns = [
    path("account/second-factor/", views.FactorsView.as_view(), name="factors"),
    path("account/second-factor/setup/", views.SetupView.as_view(), name="setup"),
    path("account/second-factor/verify/", views.VerifyView.as_view(), name="verify"),
    path("account/second-factor/passkeys/register/", passkey_views.PasskeyRegisterView.as_view(),
         name="passkey_register"),
    path("account/second-factor/passkeys/verify/", passkey_views.PasskeyVerifyView.as_view(), name="passkey_verify"),
    path("account/second-factor/passkeys/<int:pk>/delete/", passkey_views.PasskeyDeleteView.as_view(),
         name="passkey_delete"),
    path("account/api-tokens/", token_views.ApiTokensView.as_view(), name="api_tokens"),
    path("account/api-tokens/<str:key>/confirm/", token_views.ApiTokenConfirmView.as_view(), name="api_token_confirm"),
    path("account/api-tokens/<str:key>/revoke/", token_views.ApiTokenRevokeView.as_view(), name="api_token_revoke"),
]
