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
    # A node that has not reported for this many minutes is "not reporting".
    "HEALTH_NODE_SILENT_MINUTES": 15,
    # Pushed bodies wait here (gzip) for the health worker; default MEDIA_ROOT/health-pushes or var/health-pushes.
    "HEALTH_PUSH_DIR": None,
    # A push the worker took but did not finish within this many seconds is taken again (a killed worker).
    "HEALTH_PUSH_LEASE_SECONDS": 600,
    # Pushes accepted per cluster token (DRF rate: "120/min"); counted in the Django cache.
    "HEALTH_PUSH_RATE": "120/min",
    # A pending push not picked up within this many seconds is sent again by the sweep.
    "HEALTH_PUSH_RESEND_SECONDS": 120,
}


def get(name: str):
    return getattr(settings, name, DEFAULTS[name])


def push_dir():
    """Where pushed bodies wait for the worker (created on first use)."""
    from pathlib import Path

    configured = get("HEALTH_PUSH_DIR")
    if configured:
        path = Path(configured)
    elif settings.MEDIA_ROOT:
        path = Path(settings.MEDIA_ROOT) / "health-pushes"
    else:
        path = Path(settings.BASE_DIR) / "var" / "health-pushes"
    path.mkdir(parents=True, exist_ok=True)
    return path
