"""Passwords, unless the person's organization has turned them off in favour of its identity provider."""
from django.contrib.auth.backends import ModelBackend

from portal.core.sso import services

# Set on the request when the right password was refused because the organization turned passwords off: the
# sign-in form then tells the person to use their provider (only someone who knows the password learns that).
REFUSED_BY = "password_refused_by"


class PasswordPolicyBackend(ModelBackend):
    def authenticate(self, request, username=None, password=None, **kwargs):
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is None:
            return None
        provider = services.password_refusal(user)
        if provider is not None:
            if request is not None:
                setattr(request, REFUSED_BY, provider)
            return None
        return user
