"""The sign-in form: Django's, with one more answer: a right password refused because the person's organization
signs its people in through its identity provider says so, and where to go instead."""
from __future__ import annotations

from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import ValidationError
from django.utils.translation import gettext

from portal.sso.backends import REFUSED_BY


class SignInForm(AuthenticationForm):
    refused_by = None

    def clean(self):
        try:
            return super().clean()
        except ValidationError:
            provider = getattr(self.request, REFUSED_BY, None)
            if provider is None:
                raise
            self.refused_by = provider
            raise ValidationError(
                gettext("%(organization)s signs its people in through its identity provider (%(provider)s), not "
                        "with a password: use \u201cContinue with your organization\u201d below with your work "
                        "address.") % {"organization": provider.organization.name, "provider": provider.name},
                code="password_turned_off") from None
