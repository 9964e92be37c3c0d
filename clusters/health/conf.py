"""Settings of the health app, with their defaults (override any of them in the Django settings)."""
from django.conf import settings

DEFAULTS = {
    # Largest scrape accepted by the push endpoint, after gzip decompression (a 2,000-node scrape is ~190 MB).
    "HEALTH_INGEST_MAX_BYTES": 256 * 1024 * 1024,
    # A fault absent from this many reports in a row is cleared.
    "HEALTH_FAULT_CLEAR_AFTER": 3,
    # Largest nccl-tests upload, and how much of its text is kept.
    "HEALTH_VALIDATION_MAX_BYTES": 8 * 1024 * 1024,
    "HEALTH_VALIDATION_RAW_MAX": 512 * 1024,
    # "Monitoring reporting" on the readiness checklist: a report within this many minutes.
    "HEALTH_MONITORING_FRESH_MINUTES": 30,
    # Pulling from Prometheus: request timeout in seconds, and the largest answer read.
    "HEALTH_PULL_TIMEOUT": 15,
    "HEALTH_PULL_MAX_BYTES": 64 * 1024 * 1024,
    # Site policy: at or above this many uncorrectable remapped rows a GPU's node is replaced (None: off).
    "HEALTH_UNCORRECTABLE_ROWS_REPLACE_AT": None,
}


def get(name: str):
    return getattr(settings, name, DEFAULTS[name])
