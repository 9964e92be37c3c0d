"""Launch pipeline settings: Django settings first, then the environment, then defaults.

Polls are short against the embedded endpoint (stacks complete at once) and CloudFormation-sized
against real AWS.
"""
from __future__ import annotations

import os

from django.conf import settings


def _value(name: str, default: int) -> int:
    if hasattr(settings, name):
        return int(getattr(settings, name))
    return int(os.environ.get(name, default))


def poll_seconds() -> int:
    return _value("CLUSTERS_POLL_SECONDS", 1 if settings.AWS_ENDPOINT_URL else 15)


def stuck_seconds() -> int:
    """A job whose heartbeat is older than this (and whose lease ran out) is sent again by the sweep.

    A healthy job beats at every poll (every ``poll_seconds``), so a minute is several missed polls; with
    the sweep every minute a killed worker's launches resume within about two minutes. A resend
    supersedes the earlier chain of polls (see ``LaunchJob.attempts``), so a false alarm costs one poll.
    """
    return _value("CLUSTERS_STUCK_SECONDS", 60)


def lease_seconds() -> int:
    """How long one step may hold a job; a step is a few AWS calls (each bounded by botocore's timeouts)."""
    return _value("CLUSTERS_LEASE_SECONDS", 60)


def job_deadline_seconds() -> int:
    """Overall time a launch, retry or delete job may take before it fails the cluster with a reason."""
    return _value("CLUSTERS_JOB_DEADLINE_SECONDS", 4 * 3600)


def max_aws_errors() -> int:
    """Retryable AWS errors (throttling, 5xx) in a row before a job gives up with a clear message."""
    return _value("CLUSTERS_MAX_AWS_ERRORS", 5)
