"""Passwords, unless the person's organization has turned them off in favour of its identity provider."""
from django.contrib.auth.backends import ModelBackend

from portal.sso import services


class PasswordPolicyBackend(ModelBackend):
    def authenticate(self, request, username=None, password=None, **kwargs):
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is not None and services.passwords_refused(user):
            return None
        return user
