"""Single sign-on is its own app (label ``sso``) in the core."""
from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class SsoConfig(AppConfig):
    name = "portal.core.sso"
    label = "sso"
    verbose_name = _("Single sign-on")
