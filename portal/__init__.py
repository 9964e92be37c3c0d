"""The GENIAC program portal: organizations, roles, access policy, timeline and the review."""
from portal.celery import app as celery_app

__all__ = ("celery_app",)
