"""Signing out of the portal also signs out every API client of that user: their tokens are deleted."""
from django.contrib.auth.signals import user_logged_out
from django.dispatch import receiver
from knox.models import get_token_model


@receiver(user_logged_out, dispatch_uid="portal.revoke_api_tokens_on_logout")
def revoke_api_tokens(sender, request, user, **kwargs):
    if user is not None:
        get_token_model().objects.filter(user=user).delete()
