"""Settings of the time-to-know benchmark's processes: the portal's local settings as production runs them (debug
off, a real SMTP server for e-mail: the benchmark's listener on loopback). Only bench/time_to_know.py uses it."""
import os

from portal.settings.local import *  # noqa: F403

DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
EMAIL_HOST = "127.0.0.1"
EMAIL_PORT = int(os.environ.get("BENCH_SMTP_PORT", "25"))
EMAIL_TIMEOUT = 5
# The people's requests: a few users reading steadily must not hit the per-user API throttle.
REST_FRAMEWORK = {**REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {  # noqa: F405
    **REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "user": "100000/min", "ingest": "100000/min"}}  # noqa: F405
