"""Signing out of the portal also signs out every API client of that user: their tokens are deleted. And the
core's own signals, which the areas above it connect to, and its hooks (``Hook``), which they provide."""
from __future__ import annotations

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


class Unprovided(LookupError):
    """A hook was called that no app provided: the app above that provides it did not run its ``ready``."""


HOOKS: list[Hook] = []


class Hook:
    """One thing a lower layer needs from a layer above it (a function, a task, a kind of job): the lower module
    declares the hook, the upper app provides it in its ``AppConfig.ready`` (``hook.provide(...)``), so the import
    goes upward nowhere and the linter sees both ends. Using a hook nobody provided raises :class:`Unprovided`
    (never a silent None), and ``tests/portal/test_hooks.py`` fails when any declared hook is left unprovided."""

    def __init__(self, name: str, *, provider: str):
        self.name = name
        self.provider = provider  # the label of the app whose ready() provides it
        self.target = None
        HOOKS.append(self)

    def __repr__(self) -> str:
        return f"<Hook {self.name} (provided by {self.provider}: {'yes' if self.provided else 'no'})>"

    @property
    def provided(self) -> bool:
        return self.target is not None

    def provide(self, target):
        self.target = target
        return target

    def get(self):
        if self.target is None:
            raise Unprovided(f"{self.name}: the {self.provider} app provides it in its ready(), which did not run")
        return self.target

    def __call__(self, *args, **kwargs):
        return self.get()(*args, **kwargs)
