"""Signing out of the portal also signs out every API client of that user: their tokens are deleted. And the
core's own signals, which the areas above it connect to."""
from django.contrib.auth.signals import user_logged_out
from django.dispatch import Signal, receiver
from knox.models import get_token_model


@receiver(user_logged_out, dispatch_uid="portal.revoke_api_tokens_on_logout")
def revoke_api_tokens(sender, request, user, **kwargs):
    if user is not None:
        get_token_model().objects.filter(user=user).delete()


# Sent inside the transaction that archives a program cycle (``cycle=``, ``actor=``: who started the next one, or
# None), after the live rows moved on: an area whose open work stays in the archived cycle closes it there, since
# nobody may write that cycle's rows afterwards (clusters.remediation and clusters.health connect in ``ready``).
cycle_archived = Signal()
