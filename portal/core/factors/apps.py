"""Second factors are their own app (label ``factors``) in the core: it holds the passkeys; the authenticator
apps and recovery codes are django-otp's."""
from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class FactorsConfig(AppConfig):
    name = "portal.core.factors"
    label = "factors"
    verbose_name = _("Second factors")
