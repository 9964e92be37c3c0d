"""The queryset every portal model uses, so that access always has one entry point."""
from django.db import models

from portal.core import access


class RestrictedQuerySet(models.QuerySet):
    def restrict(self, user, action: str = access.VIEW) -> "RestrictedQuerySet":
        return access.restrict(self, user, action)

    def visible_to(self, user) -> "RestrictedQuerySet":
        return access.restrict(self, user, access.VIEW)
