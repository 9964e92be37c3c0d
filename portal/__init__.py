"""The GENIAC program portal: its settings, URLs and Celery application; the core (``portal.core``), and above
the domain apps the engagement (``portal.engagement``) and the weekly review (``portal.review``)."""
from portal.celery import app as celery_app

__all__ = ("celery_app",)
