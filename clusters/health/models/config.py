"""How a cluster's health reaches the portal: its ingestion settings (a hashed token, the Prometheus endpoint to
pull from)."""
from __future__ import annotations

import hashlib
import hmac
import secrets

from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from clusters.health.choices import AuthKind
from portal.core.model_fields import HttpsURLField
from portal.core.querysets import RestrictedQuerySet

TOKEN_PREFIX = "gh"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class ClusterHealthConfig(models.Model):
    """How a cluster's health reaches the portal. The ingestion token is kept as a hash only."""

    cluster = models.OneToOneField("clusters.Cluster", on_delete=models.CASCADE, related_name="health_config")
    token_hash = models.CharField(max_length=64, blank=True)
    token_hint = models.CharField(max_length=12, blank=True, help_text=_("The token's first characters, to recognise it."))
    token_rotated_at = models.DateTimeField(null=True, blank=True)
    pull_enabled = models.BooleanField(default=False)
    pull_url = HttpsURLField(blank=True, help_text=_("Prometheus-compatible base URL; /api/v1/query is appended."))
    auth_kind = models.CharField(max_length=8, choices=AuthKind.choices, default=AuthKind.NONE)
    username = models.CharField(max_length=200, blank=True)
    secret = models.CharField(max_length=500, blank=True, help_text=_("Password or bearer token; never shown again."))
    aws_region = models.CharField(max_length=32, blank=True, help_text=_("AMP workspace region (SigV4)."))
    last_pull_at = models.DateTimeField(null=True, blank=True)
    last_pull_error = models.TextField(blank=True, help_text=_("The portal's own sentence; never the endpoint's text."))
    last_pull_status = models.PositiveSmallIntegerField(null=True, blank=True,
                                                        help_text=_("HTTP status of the last pull, when it got one."))
    agent_seen_at = models.DateTimeField(null=True, blank=True, help_text=_("When the controller agent last polled."))
    agent_version = models.CharField(max_length=32, blank=True, help_text=_("The controller agent's version, as it says."))
    updated = models.DateTimeField(auto_now=True)

    objects = RestrictedQuerySet.as_manager()

    def __str__(self) -> str:
        return f"health settings of {self.cluster_id}"

    def save(self, *args, **kwargs):
        """A secret belongs to the endpoint it was given for: a new URL or auth kind drops it, so a
        stored password or token is never sent to a host its owner did not name it for."""
        loaded = getattr(self, "_loaded_target", None)
        if loaded is not None and (self.pull_url, self.auth_kind) != loaded[:2] and self.secret == loaded[2]:
            self.secret = ""
            if kwargs.get("update_fields") is not None:
                kwargs["update_fields"] = {*kwargs["update_fields"], "secret"}
        super().save(*args, **kwargs)
        self._loaded_target = (self.pull_url, self.auth_kind, self.secret)

    @classmethod
    def from_db(cls, db, field_names, values):
        instance = super().from_db(db, field_names, values)
        instance._loaded_target = (instance.__dict__.get("pull_url"), instance.__dict__.get("auth_kind"),
                                   instance.__dict__.get("secret"))
        return instance

    def rotate_token(self) -> str:
        """Make a new token, keep its hash, and answer the token itself (shown once)."""
        token = f"{TOKEN_PREFIX}{self.cluster_id}.{secrets.token_urlsafe(32)}"
        self.token_hash = hash_token(token)
        self.token_hint = token[:10]
        self.token_rotated_at = timezone.now()
        return token

    def token_matches(self, token: str) -> bool:
        return bool(self.token_hash) and hmac.compare_digest(self.token_hash, hash_token(token))

    @staticmethod
    def cluster_id_of(token: str) -> int | None:
        """The cluster a token names (``gh<cluster id>.<secret>``); None for anything else."""
        head, _, rest = token.partition(".")
        if not rest or not head.startswith(TOKEN_PREFIX) or not head[len(TOKEN_PREFIX):].isdigit():
            return None
        return int(head[len(TOKEN_PREFIX):])
