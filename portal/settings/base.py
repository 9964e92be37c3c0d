"""Settings shared by every environment; everything that differs comes from the environment."""
from datetime import timedelta
from pathlib import Path

import environ
from celery.schedules import crontab
from django.utils.translation import gettext_lazy

BASE_DIR = Path(__file__).resolve().parent.parent.parent
VAR_DIR = BASE_DIR / "var"
VAR_DIR.mkdir(exist_ok=True)

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

SECRET_KEY = env("SECRET_KEY", default="insecure-local-only-key-change-me")
DEBUG = env.bool("DEBUG", default=False)
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "rest_framework.authtoken",  # kept for its migrations only: its never-expiring tokens are revoked (portal 0004)
    "knox",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "django_celery_beat",
    "simple_history",
    "axes",
    "django_otp",
    "django_otp.plugins.otp_totp",
    "django_otp.plugins.otp_static",
    "csp",
    "portal.core",
    "portal.core.audit",
    "portal.core.factors",
    "portal.core.sso",
    "workloads",
    "workloads.interactions",
    "workloads.enablement",
    "clusters",
    "clusters.health",
    "portal.review",
    "portal.engagement",
    "portal.engagement.calls",
    "portal.review.funder",
    "clusters.accounting",
    "clusters.remediation",
]

MIDDLEWARE = [
    # First, so the time counted is the whole answer (portal_http_* on /metrics).
    "portal.core.metrics.middleware.RequestMetricsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The language: the signed-in user's preference (portal.core.middleware.UserLanguageMiddleware, below), else the
    # language cookie, else Accept-Language, else LANGUAGE_CODE.
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "portal.core.middleware.RejectNulBytesMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "portal.core.middleware.UserLanguageMiddleware",
    "portal.core.middleware.PortalLoginRequiredMiddleware",
    "portal.core.audit.recording.AuditMiddleware",
    "django_otp.middleware.OTPMiddleware",
    "portal.core.factors.middleware.SecondFactorMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "simple_history.middleware.HistoryRequestMiddleware",
    "csp.middleware.CSPMiddleware",
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "portal.urls"
WSGI_APPLICATION = "portal.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "portal.core.context_processors.roles",
                "portal.core.context_processors.csp_nonce",
                "workloads.context_processors.pending_quota_requests",
                "portal.core.context_processors.js_strings",
            ],
            "builtins": ["django.templatetags.i18n", "portal.core.templatetags.portal_display",
                         "portal.core.templatetags.portal_submissions"],
        },
    },
]

DATABASES = {
    "default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'portal.sqlite3'}"),
}
DATABASES["default"]["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=60)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # The demo's web server and worker share one SQLite file: wait for locks, write-ahead log.
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        timeout=30,
        transaction_mode="IMMEDIATE",
        init_command="PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_USER_MODEL = "portal.User"
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    # Passwords (Django's ModelBackend), refused where an organization's identity provider turned them off.
    "portal.core.sso.backends.PasswordPolicyBackend",
]
# Sign-in throttling: five failures for one username from one address lock it for 15 minutes.
AXES_FAILURE_LIMIT = env.int("AXES_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = env.float("AXES_COOLOFF_HOURS", default=0.25)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_VERBOSE = False
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_IPWARE_PROXY_COUNT = env.int("AXES_PROXY_COUNT", default=0)
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# The portal speaks English and Japanese (docs/i18n.md); LANGUAGE_CODE is the program's default, used where no
# preference, cookie or Accept-Language says otherwise, and for Slack messages (shared channels).
LANGUAGE_CODE = env("LANGUAGE_CODE", default="en")
LANGUAGES = [("en", "English"), ("ja", "日本語")]
LOCALE_PATHS = [BASE_DIR / "locale"]
LANGUAGE_COOKIE_NAME = "portal_language"
LANGUAGE_COOKIE_AGE = 365 * 24 * 3600
LANGUAGE_COOKIE_SAMESITE = "Lax"
TIME_ZONE = env("TIME_ZONE", default="Asia/Tokyo")
USE_I18N = True
LOCALE_PATHS = [BASE_DIR / "locale"]
USE_TZ = True
# One date format on every page (portal/core/formats/<language>): 2026-12-01, 2026-12-01 19:52 in TIME_ZONE, in English
# and in Japanese (whose long forms are 12月1日, 2026年12月). No thousands separator in either (both languages would group the same
# way, and numbers in attributes and data for charts must stay plain): docs/DECISIONS.md.
FORMAT_MODULE_PATH = ["portal.core.formats"]
USE_THOUSAND_SEPARATOR = False
# The launch-day board's target, instance type=instances (the case study: 127 P5 and 24 Trn1 in a day).
LAUNCH_DAY_TARGET = env("LAUNCH_DAY_TARGET", default="p5.48xlarge=127,trn1.32xlarge=24")

STATIC_URL = "static/"
STATIC_ROOT = env("STATIC_ROOT", default=str(VAR_DIR / "staticfiles"))
Path(STATIC_ROOT).mkdir(parents=True, exist_ok=True)
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True

# Request bodies: uploads (NCCL logs, Prometheus text) are bounded; larger bodies get 413.
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("DATA_UPLOAD_MAX_MEMORY_SIZE", default=10 * 1024 * 1024)
FILE_UPLOAD_MAX_MEMORY_SIZE = DATA_UPLOAD_MAX_MEMORY_SIZE
# Multipart uploads over this size are refused while they stream in (portal/core/upload_limits.py), with 413.
FILE_UPLOAD_MAX_BYTES = env.int("FILE_UPLOAD_MAX_BYTES", default=16 * 1024 * 1024)
FILE_UPLOAD_HANDLERS = [
    "portal.core.upload_limits.SizeLimitedUploadHandler",
    "django.core.files.uploadhandler.MemoryFileUploadHandler",
    "django.core.files.uploadhandler.TemporaryFileUploadHandler",
]

# A filter bar's choice with nothing picked reads "Any", not Django's "---------".
FILTERS_EMPTY_CHOICE_LABEL = gettext_lazy("Any")

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "portal.core.audit.auth.AuditedTokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_FILTER_BACKENDS": [
        "portal.core.api.filtering.PortalFilterBackend",
        "rest_framework.filters.OrderingFilter",
    ],
    "DEFAULT_PAGINATION_CLASS": "portal.core.api.pagination.BoundedLimitOffsetPagination",
    "DEFAULT_PARSER_CLASSES": [
        "portal.core.api.parsers.DepthLimitedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "portal.core.api.schema.PortalAutoSchema",
    "DEFAULT_THROTTLE_CLASSES": [
        "rest_framework.throttling.AnonRateThrottle",
        "rest_framework.throttling.UserRateThrottle",
        "rest_framework.throttling.ScopedRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "anon": env("THROTTLE_ANON", default="60/min"),
        "user": env("THROTTLE_USER", default="2000/min"),
        "ingest": env("THROTTLE_INGEST", default="600/min"),
        "token": env("THROTTLE_TOKEN", default="20/min"),
    },
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
    "EXCEPTION_HANDLER": "portal.core.api.errors.exception_handler",
}
# The audit trail (portal/core/audit): how long its events are kept (docs/security.md).
AUDIT_RETENTION_DAYS = env.int("AUDIT_RETENTION_DAYS", default=400)
# A second factor before acting on customer accounts (portal/core/factors/policy.py): off here, on in production.
SECOND_FACTOR_REQUIRED = env.bool("SECOND_FACTOR_REQUIRED", default=False)
SECOND_FACTOR_SESSION_HOURS = env.int("SECOND_FACTOR_SESSION_HOURS", default=12)
SECOND_FACTOR_FRESH_MINUTES = env.int("SECOND_FACTOR_FRESH_MINUTES", default=10)
# Passkeys (WebAuthn): the relying party id is the portal's host name unless set (the registrable domain people
# reach the portal at, when a proxy changes the host); the name is what authenticators show.
WEBAUTHN_RP_ID = env("WEBAUTHN_RP_ID", default="")
WEBAUTHN_RP_NAME = env("WEBAUTHN_RP_NAME", default="GENIAC program portal")
OTP_TOTP_ISSUER = "GENIAC program portal"
# API tokens (django-rest-knox): stored hashed, expire, revoked when their user signs out.
REST_KNOX = {
    "TOKEN_TTL": timedelta(hours=env.int("API_TOKEN_TTL_HOURS", default=10)),
    "TOKEN_LIMIT_PER_USER": env.int("API_TOKEN_LIMIT_PER_USER", default=20),
    "AUTO_REFRESH": False,
    "AUTH_HEADER_PREFIX": "Token",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "GENIAC program portal API",
    "DESCRIPTION": "Organizations, workloads, quotas, interactions, clusters, health and reviews.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    "ENUM_NAME_OVERRIDES": {"NodeVerdictEnum": "portal.core.choices.NodeVerdict", "SeverityEnum": "portal.core.choices.Severity",
                            "FaultSeverityEnum": "portal.core.choices.FaultSeverity",
                            "RunVerdictEnum": "clusters.health.choices.RunVerdict",
                            "RemediationKindEnum": "clusters.remediation.choices.ActionKind",
                            "ReservationKindEnum": "workloads.choices.ReservationKind"},
    "OAS_VERSION": "3.1.0",  # propertyNames (field names without NUL) needs JSON Schema 2020-12
    # The default enum hook, then OpenAPI links between operations (portal/core/api/schema.py).
    "POSTPROCESSING_HOOKS": ["drf_spectacular.hooks.postprocess_schema_enums", "portal.core.api.schema.add_links",
                             "portal.core.api.schema.forbid_nul_in_input"],
}

# Celery: JSON only, late acknowledgement so a task whose worker dies is delivered again.
REDIS_URL = env("REDIS_URL", default="")
CELERY_BROKER_URL = env("CELERY_BROKER_URL", default=REDIS_URL or "memory://")
# No result store by default: no task result is ever read (see portal/celery.py and DECISIONS.md).
CELERY_RESULT_BACKEND = env("CELERY_RESULT_BACKEND", default=None)
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": env.int("CELERY_VISIBILITY_TIMEOUT", default=900)}
if CELERY_BROKER_URL.startswith("filesystem://"):
    # Single-host broker for a demo without Redis: messages are files under var/broker.
    _broker_dir = VAR_DIR / "broker"
    CELERY_BROKER_TRANSPORT_OPTIONS.update(
        data_folder_in=str(_broker_dir / "out"),
        data_folder_out=str(_broker_dir / "out"),
        processed_folder=str(_broker_dir / "processed"),
        store_processed=False,
    )
CELERY_TASK_ALWAYS_EAGER = False
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
CELERY_TIMEZONE = TIME_ZONE
# Every periodic task, in one place. Beat's database scheduler writes these entries (by name) when it starts;
# the admin can then pause one or change its interval. Earlier migrations created some of the same names.
CELERY_BEAT_SCHEDULE = {
    "Ask identity providers about the people they signed in": {"task": "sso.check_identities", "schedule": 60 * 60},
    "Purge the audit trail past its retention": {
        "task": "audit.purge", "schedule": crontab(minute="30", hour="3")},
    "Warn before quotas and reservations end": {
        "task": "workloads.warn_expiring", "schedule": crontab(minute="0", hour="9")},  # 09:00 program time
    "sync-open-support-cases": {"task": "interactions.support.sync_open_cases", "schedule": 15 * 60},
    # Every kind of background job (portal.core.jobs.registry): each kind's own part (launch deadlines, validation
    # time-outs, automatic remediation proposals, leftover push bodies), then what the broker missed and what a
    # dead worker held. The six sweeps it replaces keep their task names for one release.
    "Sweep background jobs": {"task": "portal.jobs.sweep", "schedule": 60},
    "Pull cluster health from Prometheus": {"task": "clusters.health.tasks.pull_all", "schedule": 5 * 60},
    "Read HyperPod cluster events": {"task": "remediation.poll_hyperpod_events", "schedule": 60},  # its own repairs
    "Forget expired submission keys": {"task": "portal.expire_submissions", "schedule": 60 * 60},
    # A next cycle scheduled for a later day starts that day (hourly, so a beat down at midnight catches up).
    "Start a scheduled program cycle": {"task": "engagement.switch_cycles", "schedule": crontab(minute="5")},
    # Closed hours' accelerator-hours (a few minutes past, so the hour's last reports are in), then idle capacity.
    "Account accelerator-hours": {"task": "accounting.catch_up", "schedule": crontab(minute="7")},
    # What AWS says of the reservations in force against what the portal counts held (reservation_checks).
    "Cross-check reservations with AWS": {"task": "accounting.check_all_reservations",
                                          "schedule": crontab(minute="40", hour="*/3")},
    # Cost Explorer updates a day's figures for about a day after it ends: fetch once a day, early in program time.
    "Fetch cost from Cost Explorer": {"task": "workloads.spend.fetch_all_costs", "schedule": crontab(minute="30", hour="6")},
}  # queues come from the task routes in portal/celery.py

# /metrics (portal.core.metrics.views): off until one of these is set. The bearer token the operator's Prometheus
# sends, and/or the networks it scrapes from (CIDR, comma-separated).
METRICS_TOKEN = env("METRICS_TOKEN", default="")
METRICS_ALLOWED_NETWORKS = env.list("METRICS_ALLOWED_NETWORKS", default=[])

CACHES = {
    "default": (
        # Short timeouts: with Redis down a throttled request gets its answer at once (see DECISIONS.md 11).
        {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL,
         "OPTIONS": {"socket_timeout": 0.5, "socket_connect_timeout": 0.5}}
        if REDIS_URL and env.bool("USE_REDIS_CACHE", default=False)
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}

# AWS: the same code talks to the embedded endpoint or to real AWS.
AWS_ENDPOINT_URL = env("AWS_ENDPOINT_URL", default="") or None
AWS_DEFAULT_REGION = env("AWS_DEFAULT_REGION", default="ap-northeast-1")
AWS_MAX_ATTEMPTS = env.int("AWS_MAX_ATTEMPTS", default=5)
AWS_ROLE_SESSION_NAME = env("AWS_ROLE_SESSION_NAME", default="geniac-portal")
# The program's own role (the account that buys Capacity Blocks and training plans for the next cycle): the award
# of a call asks its offerings through it. Unset: the portal's own identity.
AWS_PROGRAM_ROLE_ARN = env("AWS_PROGRAM_ROLE_ARN", default="")
AWS_PROGRAM_EXTERNAL_ID = env("AWS_PROGRAM_EXTERNAL_ID", default="")
# Cost Explorer (workloads/spend.py): how many recent days each daily fetch asks for again (estimates get revised).
SPEND_FETCH_DAYS = env.int("SPEND_FETCH_DAYS", default=14)

# The portal's own address as people, clusters and AWS reach it (https://portal.example.org), one setting for all:
# links in notifications; where validation jobs post their outputs (empty: the address the request came in on);
# where the demo's emulated nodes push their health (manage.py run_demo sets it to its own web server); and the SNS
# endpoint a launched observability stack subscribes to its alert topic, only when https (SNS alerts carry cluster
# names; an http address leaves the alerts on the topic, clusters/launches/service.py portal_alert_endpoint).
PORTAL_BASE_URL = env("PORTAL_BASE_URL", default="")
EMAIL_BACKEND = env("EMAIL_BACKEND", default="django.core.mail.backends.console.EmailBackend")
DEFAULT_FROM_EMAIL = env("DEFAULT_FROM_EMAIL", default="portal@geniac.invalid")
FUNDER_REPORT_RECIPIENTS = env.list("FUNDER_REPORT_RECIPIENTS", default=[])  # where issued funder reports are sent
SLACK_WEBHOOK_URL = env("SLACK_WEBHOOK_URL", default="")
# The Slack bridge (portal/engagement/slack.py): the app's signing secret verifies every inbound request; the
# bot token calls the Web API at SLACK_API_URL (a local stand-in in tests).
SLACK_SIGNING_SECRET = env("SLACK_SIGNING_SECRET", default="")
SLACK_BOT_TOKEN = env("SLACK_BOT_TOKEN", default="")
SLACK_API_URL = env("SLACK_API_URL", default="https://slack.com/api/")
# The message shortcut's outcome is told through the request's response_url when it starts with this (Slack's own).
SLACK_RESPONSE_URL_PREFIX = env("SLACK_RESPONSE_URL_PREFIX", default="https://hooks.slack.com/")

# Content Security Policy: scripts only from this origin (htmx, vendored chart library, page scripts
# under static/js); no eval. Style attributes are allowed for server-computed bar widths only.
from csp.constants import NONCE, NONE, SELF  # noqa: E402

CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF, NONCE],
        "style-src": [SELF],
        "style-src-attr": ["'unsafe-inline'"],
        "img-src": [SELF, "data:"],
        "font-src": [SELF, "data:"],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    },
}

SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO")},
    "loggers": {
        "botocore": {"level": "WARNING"},
        "urllib3": {"level": "WARNING"},
        "axes": {"level": env("AXES_LOG_LEVEL", default="WARNING")},
    },
}

# Launch pipeline (clusters/launches/pipeline/steps.py, clusters/tasks.py). Polls are short against the embedded endpoint (stacks
# complete at once) and CloudFormation-sized against real AWS. A healthy job beats at every poll, so a job whose
# heartbeat is older than CLUSTERS_STUCK_SECONDS (and whose lease ran out) is sent again by the minute sweep: a
# killed worker's launches resume within about two minutes.
CLUSTERS_POLL_SECONDS = env.int("CLUSTERS_POLL_SECONDS", default=1 if AWS_ENDPOINT_URL else 15)
CLUSTERS_STUCK_SECONDS = env.int("CLUSTERS_STUCK_SECONDS", default=60)
CLUSTERS_LEASE_SECONDS = env.int("CLUSTERS_LEASE_SECONDS", default=60)  # one step: a few bounded AWS calls
# How long a form's submission key or an API call's Idempotency-Key is honoured (portal.core.submissions): a repeat
# within it lands on the first request's row; the hourly sweep forgets older keys.
SUBMISSION_KEY_TTL_HOURS = env.int("SUBMISSION_KEY_TTL_HOURS", default=24)
CLUSTERS_JOB_DEADLINE_SECONDS = env.int("CLUSTERS_JOB_DEADLINE_SECONDS", default=4 * 3600)
# Retryable AWS errors in a row before a provider step fails (launches, validations, remediations: every
# portal.core.jobs.runner kind, unless it declares its own ``max_aws_errors``).
JOB_MAX_AWS_ERRORS = env.int("JOB_MAX_AWS_ERRORS", default=5)

# Cluster health (clusters/health/).
HEALTH_INGEST_MAX_BYTES = env.int("HEALTH_INGEST_MAX_BYTES", default=256 * 1024 * 1024)  # a push, decompressed
HEALTH_FAULT_CLEAR_AFTER = env.int("HEALTH_FAULT_CLEAR_AFTER", default=3)  # reports without a fault clear it
HEALTH_VALIDATION_MAX_BYTES = env.int("HEALTH_VALIDATION_MAX_BYTES", default=8 * 1024 * 1024)  # an NCCL upload
HEALTH_VALIDATION_RAW_MAX = env.int("HEALTH_VALIDATION_RAW_MAX", default=512 * 1024)  # of it, kept as text
HEALTH_MONITORING_FRESH_MINUTES = env.int("HEALTH_MONITORING_FRESH_MINUTES", default=30)  # readiness checklist
HEALTH_PULL_TIMEOUT = env.int("HEALTH_PULL_TIMEOUT", default=15)
HEALTH_PULL_MAX_BYTES = env.int("HEALTH_PULL_MAX_BYTES", default=64 * 1024 * 1024)
# Site policy: at or above this many uncorrectable remapped rows a GPU's node is replaced (unset: off).
HEALTH_UNCORRECTABLE_ROWS_REPLACE_AT = env.int("HEALTH_UNCORRECTABLE_ROWS_REPLACE_AT", default=None)
HEALTH_NODE_SILENT_MINUTES = env.int("HEALTH_NODE_SILENT_MINUTES", default=15)  # then "not reporting"
# Pushes wait for the health worker (clusters/health/ingest/bodies.py): "local" in HEALTH_PUSH_DIR (one host, or a
# volume the web server and the worker share), or "s3" in the portal's bucket HEALTH_PUSH_BUCKET (workers on
# any host). With the embedded AWS endpoint (the demo) its S3 is the default.
HEALTH_PUSH_STORAGE = env("HEALTH_PUSH_STORAGE", default="s3" if AWS_ENDPOINT_URL else "local")
HEALTH_PUSH_BUCKET = env("HEALTH_PUSH_BUCKET", default="geniac-portal-health-pushes")
# S3-compatible storage of its own for the bucket (MinIO in compose); unset: AWS_ENDPOINT_URL and the portal's identity.
HEALTH_PUSH_S3_ENDPOINT_URL = env("HEALTH_PUSH_S3_ENDPOINT_URL", default="") or None
HEALTH_PUSH_S3_ACCESS_KEY_ID = env("HEALTH_PUSH_S3_ACCESS_KEY_ID", default="")
HEALTH_PUSH_S3_SECRET_ACCESS_KEY = env("HEALTH_PUSH_S3_SECRET_ACCESS_KEY", default="")
# A push request waits on the store: bounded like a send to Redis (a hung S3 answers 503 in seconds, not after
# the hang). Reads by the worker use the same client; an outage there is retried (below), never final.
HEALTH_PUSH_S3_CONNECT_TIMEOUT = env.float("HEALTH_PUSH_S3_CONNECT_TIMEOUT", default=2.0)
HEALTH_PUSH_S3_READ_TIMEOUT = env.float("HEALTH_PUSH_S3_READ_TIMEOUT", default=5.0)
HEALTH_PUSH_S3_MAX_ATTEMPTS = env.int("HEALTH_PUSH_S3_MAX_ATTEMPTS", default=2)
# A push the store cannot give back for an outage is read again with backoff (from RETRY_SECONDS, doubling up to
# ten times that) for as long as a push may wait: MAX_WAIT_SECONDS after it was received (the bucket expires
# bodies after a day), then it fails saying so. The push endpoint answers 503 with this Retry-After meanwhile.
HEALTH_PUSH_STORAGE_RETRY_SECONDS = env.int("HEALTH_PUSH_STORAGE_RETRY_SECONDS", default=30)
HEALTH_PUSH_MAX_WAIT_SECONDS = env.int("HEALTH_PUSH_MAX_WAIT_SECONDS", default=6 * 3600)
HEALTH_PUSH_DIR = env("HEALTH_PUSH_DIR", default=str(VAR_DIR / "health-pushes"))
HEALTH_PUSH_LEASE_SECONDS = env.int("HEALTH_PUSH_LEASE_SECONDS", default=600)  # then a killed worker's push is retaken
HEALTH_PUSH_RATE = env("HEALTH_PUSH_RATE", default="120/min")  # per cluster token
HEALTH_PUSH_RESEND_SECONDS = env.int("HEALTH_PUSH_RESEND_SECONDS", default=120)  # a pending push not picked up
# Alerts through Amazon SNS (clusters/health/ingest/sns.py): a message older than this is refused as a replay; extra hosts
# (besides sns.<region>.amazonaws.com) allowed to serve the signing certificate and SubscribeURL (tests only).
HEALTH_SNS_MAX_AGE_SECONDS = env.int("HEALTH_SNS_MAX_AGE_SECONDS", default=3600)
HEALTH_SNS_CERT_HOSTS = env.list("HEALTH_SNS_CERT_HOSTS", default=[])

# Outbound calls to URLs users give (portal/core/outbound.py): hosts that may be called even when they resolve
# to private or local addresses (no name is exempt by itself, AMP's included: list an AMP workspace host reached
# through a VPC endpoint here), and hosts that may be called over plain http.
OUTBOUND_ALLOWED_HOSTS = env.list("OUTBOUND_ALLOWED_HOSTS", default=[])
OUTBOUND_HTTP_HOSTS = env.list("OUTBOUND_HTTP_HOSTS", default=[])
# Name servers for those lookups ("address" or "address:port", IPv6 in brackets); unset: the system's resolver.
OUTBOUND_DNS_SERVERS = env.list("OUTBOUND_DNS_SERVERS", default=[])

# Capacity accounting (clusters/accounting): hourly rows for this many weeks, daily rows after; each hourly run
# computes this many closed hours again (late reports count). A cluster whose healthy accelerators stay under
# ACCOUNTING_IDLE_BUSY_SHARE busy for ACCOUNTING_IDLE_HOURS while a reservation is in force is idle capacity.
ACCOUNTING_HOURLY_WEEKS = env.int("ACCOUNTING_HOURLY_WEEKS", default=6)
ACCOUNTING_RECOMPUTE_HOURS = env.int("ACCOUNTING_RECOMPUTE_HOURS", default=3)
ACCOUNTING_IDLE_BUSY_SHARE = env.float("ACCOUNTING_IDLE_BUSY_SHARE", default=0.10)
ACCOUNTING_IDLE_HOURS = env.int("ACCOUNTING_IDLE_HOURS", default=24)
# A cluster that was busy and sits near zero (under ACCOUNTING_STALL_BUSY_SHARE) with its EFA traffic flat for
# ACCOUNTING_STALL_MINUTES (an organization's own setting where it has one) opens a "training stalled?" fault.
ACCOUNTING_STALL_MINUTES = env.int("ACCOUNTING_STALL_MINUTES", default=15)
ACCOUNTING_STALL_BUSY_SHARE = env.float("ACCOUNTING_STALL_BUSY_SHARE", default=0.05)
ACCOUNTING_STALL_WAS_BUSY_SHARE = env.float("ACCOUNTING_STALL_WAS_BUSY_SHARE", default=0.5)
# EFA traffic per node under this (bytes per second, RDMA and send/receive together) is flat (a run moves GB/s).
ACCOUNTING_STALL_EFA_BYTES_PER_SECOND = env.float("ACCOUNTING_STALL_EFA_BYTES_PER_SECOND", default=1_000_000)
# NCCL validation (clusters/health/validation/service.py): jobs post outputs under PORTAL_BASE_URL (else the request's address).
VALIDATION_POLL_SECONDS = env.int("VALIDATION_POLL_SECONDS", default=1 if AWS_ENDPOINT_URL else 10)
VALIDATION_LEASE_SECONDS = env.int("VALIDATION_LEASE_SECONDS", default=60)
VALIDATION_STUCK_SECONDS = env.int("VALIDATION_STUCK_SECONDS", default=120)  # no heartbeat: the sweep resends
VALIDATION_TIMEOUT_MINUTES = env.int("VALIDATION_TIMEOUT_MINUTES", default=120)  # a submitted job that never reports
VALIDATION_SACCT_WAIT_SECONDS = env.int("VALIDATION_SACCT_WAIT_SECONDS", default=10)  # a timed-out job: sacct's answer
VALIDATION_TOKEN_HOURS = env.int("VALIDATION_TOKEN_HOURS", default=6)  # an upload token's life (and the job's cap)
VALIDATION_PAIRWISE_MAX_NODES = env.int("VALIDATION_PAIRWISE_MAX_NODES", default=16)  # n·(n-1)/2 pairs
VALIDATION_REGRESSION_SHARE = env.float("VALIDATION_REGRESSION_SHARE", default=0.10)  # trend: drop vs the previous versions
# SSM shows a new command's invocation a little after SendCommand answers: GetCommandInvocation's
# InvocationDoesNotExist is read as "Pending" for this long from its first answer (clusters/provider_states.py).
SSM_INVISIBLE_SECONDS = env.int("SSM_INVISIBLE_SECONDS", default=60)
# HyperPod Slurm's controller agent (docs/DECISIONS.md 42): a poll waits up to AGENT_POLL_SECONDS for work, a claim
# unanswered for AGENT_LEASE_SECONDS is queued again, an agent unheard for AGENT_SEEN_MINUTES is not relied on.
AGENT_POLL_SECONDS, AGENT_LEASE_SECONDS, AGENT_SEEN_MINUTES = (
    env.int("AGENT_POLL_SECONDS", default=20), env.int("AGENT_LEASE_SECONDS", default=600), env.int("AGENT_SEEN_MINUTES", default=10))
REMEDIATION_POLL_SECONDS = env.int("REMEDIATION_POLL_SECONDS", default=1 if AWS_ENDPOINT_URL else 20)
REMEDIATION_LEASE_SECONDS = env.int("REMEDIATION_LEASE_SECONDS", default=60)
REMEDIATION_STUCK_SECONDS = env.int("REMEDIATION_STUCK_SECONDS", default=120)
REMEDIATION_EXECUTION_SECONDS = env.int("REMEDIATION_EXECUTION_SECONDS", default=2 * 3600)
REMEDIATION_VERIFY_SECONDS = env.int("REMEDIATION_VERIFY_SECONDS", default=6 * 3600)  # for the next clean report
REMEDIATION_XID_SPREAD_NODES = env.int("REMEDIATION_XID_SPREAD_NODES", default=3)  # one XID on this many nodes
REMEDIATION_XID_SPREAD_DAYS = env.int("REMEDIATION_XID_SPREAD_DAYS", default=7)
# The shortest cool-down between two actions on one node an organization's policy may set: a node just remediated
# is watched for a verification window (REMEDIATION_VERIFY_SECONDS, 6 h by default) before it is acted on again.
REMEDIATION_MIN_COOLDOWN_HOURS = env.int("REMEDIATION_MIN_COOLDOWN_HOURS", default=6)
# A proposal refused again for the same nodes, kind and rule within this window is counted on the first refused
# action (``repeats``) instead of making another refused row and timeline entry.
REMEDIATION_REFUSAL_WINDOW_SECONDS = env.int("REMEDIATION_REFUSAL_WINDOW_SECONDS", default=3600)
# The demo's console (manage.py run_demo sets DEMO_QUIET_CONSOLE): a refused page is one line, not a traceback.
if env.bool("DEMO_QUIET_CONSOLE", default=False):
    LOGGING["filters"] = {"one_line_refusals": {"()": "portal.core.logfilters.OneLineRefusals"}}
    LOGGING["handlers"]["console"]["filters"] = ["one_line_refusals"]
