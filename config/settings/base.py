"""Settings shared by every environment (cookiecutter-django's layout): each setting is declared
once here, with its default, and read from the environment where a deployment may change it.

- local.py: `make run` (DEBUG on, a development SECRET_KEY), the embedded default below;
- production.py: deployments (manage.py, wsgi and celery default to it; needs SECRET_KEY);
- test.py: the test suite (PostgreSQL + Redis on localhost).

Embedded default (no env vars): SQLite file in var/ and kombu's filesystem broker in var/celery,
so `make run` needs no server. The real stack sets DATABASE_URL and CELERY_BROKER_URL.
"""

import json
import os
from datetime import timedelta
from pathlib import Path

import dj_database_url
from csp.constants import NONE, SELF, UNSAFE_INLINE
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent.parent
VAR_DIR = Path(os.environ.get("STEPLABEL_VAR_DIR", BASE_DIR / "var"))
VAR_DIR.mkdir(parents=True, exist_ok=True)


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


# No default here: local.py and test.py set a development key, production.py requires a real one.
SECRET_KEY = os.environ.get("SECRET_KEY", "")
DEBUG = env_bool("DEBUG", False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1],testserver")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", "")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI files served from here, not a CDN (CSP: 'self' only)
    "axes",
    "csp",
    "core",
    "annotate",
    "ml",
    "autolabel",
    "labeling_api",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "config.middleware.RejectNulInQueryMiddleware",
    "config.middleware.ImportSizeLimitMiddleware",  # before CSRF, which would read (store) the upload
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "config.middleware.PrivatePagesNotStoredMiddleware",  # needs request.user
    "config.middleware.ApiNotStoredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "config.middleware.StyledNotFoundMiddleware",  # make run (DEBUG) shows the styled 404, not Django's
    "axes.middleware.AxesMiddleware",  # last: turns a locked-out login into its lockout response
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

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
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL", f"sqlite:///{VAR_DIR / 'steplabel.sqlite3'}"),
        conn_max_age=int(os.environ.get("DB_CONN_MAX_AGE", "60")),
        # A kept connection is checked before a request reuses it: after PostgreSQL restarted (or
        # dropped idle connections), each kept one otherwise failed its next request with a 500.
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Web and worker processes share one SQLite file (the embedded default, a small team at once):
    # - IMMEDIATE: a transaction takes the write lock at BEGIN, so it waits its turn (busy timeout)
    #   instead of failing with "database is locked" when it upgrades from read to write mid-way;
    # - WAL: readers never wait on the writer, nor the writer on readers;
    # - timeout: how long (s) a writer waits for the lock before an error.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        transaction_mode="IMMEDIATE",
        init_command="PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        timeout=int(os.environ.get("SQLITE_BUSY_TIMEOUT", "30")),
    )
    DATABASES["default"]["CONN_MAX_AGE"] = 0
elif DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # PostgreSQL prepares the queue hot path's fixed statements (core.rows.cursor: server-side
    # binding) once they ran this many times on a connection, so it stops planning them on every
    # call; the ORM's queries (client-side binding) are never prepared. "off" for a connection
    # pooler in transaction mode that cannot keep prepared statements.
    _prepare = os.environ.get("DB_PREPARE_THRESHOLD", "0")
    DATABASES["default"].setdefault("OPTIONS", {})["prepare_threshold"] = None if _prepare == "off" else int(_prepare)

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Login throttling (django-axes): after AXES_FAILURE_LIMIT failed logins for one username from one
# IP address, that pair is locked out for AXES_COOLOFF_MINUTES; a successful login resets the count.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = int(os.environ.get("AXES_FAILURE_LIMIT", "5"))
AXES_COOLOFF_TIME = timedelta(minutes=int(os.environ.get("AXES_COOLOFF_MINUTES", "15")))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
# Axes otherwise prints its start-up banner on stderr of every process (each management command).
AXES_VERBOSE = env_bool("AXES_VERBOSE", False)
# Reverse proxies in front of Django that append to X-Forwarded-For (0: none). Lockouts and rate
# limits key on the address the outermost of them saw (config/client_ip.py; DRF's NUM_PROXIES).
TRUSTED_PROXIES = int(os.environ.get("TRUSTED_PROXIES", "0"))
AXES_CLIENT_IP_CALLABLE = "config.client_ip.client_ip"

# Content-Security-Policy (django-csp): every script and asset from this origin; KaTeX needs inline
# styles. Pages pass configuration as <script type="application/json">, never inline code.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF, UNSAFE_INLINE],
        "img-src": [SELF, "data:"],
        "font-src": [SELF, "data:"],
        "connect-src": [SELF],
        "object-src": [NONE],
        "frame-ancestors": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
    }
}

# A cache shared by web processes (DRF throttling). Redis when CACHE_URL is set (the real stack and
# tests); a per-process memory cache for the embedded default.
CACHE_URL = os.environ.get("CACHE_URL", "")
if CACHE_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": CACHE_URL,
            "KEY_PREFIX": "steplabel",
            # Fail fast when Redis is down: throttling then lets requests through (labeling_api.throttling).
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
        }
    }
else:
    # Embedded default: a file cache, shared by the web and worker processes (stats snapshots).
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(VAR_DIR / "cache"),
        }
    }

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
# Where collectstatic puts the files web serves (WhiteNoise); production needs them collected.
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT", BASE_DIR / "static_build"))
STATICFILES_DIRS = [p for p in [BASE_DIR / "frontend" / "dist"] if p.exists()]
MEDIA_ROOT = Path(os.environ.get("MEDIA_ROOT", VAR_DIR / "media"))

# A refused form (missing or stale CSRF token) gets the product's 403 page.
CSRF_FAILURE_VIEW = "annotate.views_errors.csrf_failure"

LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/accounts/login/"

REST_FRAMEWORK = {
    # Application errors (core.errors) from services become 400/403/404/409 answers here.
    "EXCEPTION_HANDLER": "labeling_api.exceptions.exception_handler",
    # Token first: its WWW-Authenticate header makes unauthenticated calls 401, not 403.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "labeling_api.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # JSON the database can store (no NUL, lone surrogates, infinities): else a 400 naming the field.
    "DEFAULT_PARSER_CLASSES": [
        "labeling_api.parsers.StrictJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # `?format=` is the export format (prm800k|trl), not DRF's renderer override.
    "URL_FORMAT_OVERRIDE": None,
    # Per-user (so per-token) limits on expensive endpoints, by their `throttle_scope`.
    "DEFAULT_THROTTLE_CLASSES": ["labeling_api.throttling.ScopedRateThrottle"],
    # The client address (anonymous rate limits, and login lockouts through config/client_ip.py):
    # without it DRF keys on the whole X-Forwarded-For header, which a client writes.
    "NUM_PROXIES": TRUSTED_PROXIES,
    "DEFAULT_THROTTLE_RATES": {
        "export": os.environ.get("THROTTLE_EXPORT", "60/hour"),
        "retrain": os.environ.get("THROTTLE_RETRAIN", "20/hour"),
        "score": os.environ.get("THROTTLE_SCORE", "120/minute"),
    },
}

# Uploads to the import API larger than this are refused with 413 before any parsing.
IMPORT_MAX_BYTES = int(os.environ.get("IMPORT_MAX_BYTES", str(2 * 1024**3)))
# What a gzip upload may unpack to, and one line of it (or of a plain file): past either the import
# stops with a named error (a 400 KB gzip holding a 400 MB line took the worker's memory).
IMPORT_MAX_UNPACKED_BYTES = int(os.environ.get("IMPORT_MAX_UNPACKED_BYTES", str(16 * 1024**3)))
IMPORT_MAX_LINE_BYTES = int(os.environ.get("IMPORT_MAX_LINE_BYTES", str(16 * 1024**2)))
# API tokens older than this many days are refused (401, "token expired"); 0: they never expire.
API_TOKEN_MAX_AGE_DAYS = int(os.environ.get("API_TOKEN_MAX_AGE_DAYS", "0"))
if API_TOKEN_MAX_AGE_DAYS < 0:
    raise ImproperlyConfigured("API_TOKEN_MAX_AGE_DAYS must be 0 (tokens never expire) or a number of days")
# Invite links made on a project's members page stop working after this many days (and after one use).
INVITE_MAX_AGE_DAYS = int(os.environ.get("INVITE_MAX_AGE_DAYS", "7"))

# The model loop (ml/): a training run stuck in `running` this long is failed and retried by the sweep.
ML_STALE_RUN_SECONDS = int(os.environ.get("ML_STALE_RUN_SECONDS", "3600"))
# Training defaults of the deployment (a JSON object of PRMConfig fields); a run's own overrides win.
# A shell's quoting slip ('{max_epochs: 5}') was a JSONDecodeError traceback naming no variable on
# every command, and a list made every run fail with "TypeError: 'list' object is not a mapping".
try:
    ML_TRAINING_CONFIG = json.loads(os.environ.get("ML_TRAINING_CONFIG") or "{}")
except json.JSONDecodeError as exc:
    raise ImproperlyConfigured(
        f"ML_TRAINING_CONFIG is not JSON ({exc}): give an object, e.g. '{{\"max_epochs\": 5}}'"
    ) from None
if not isinstance(ML_TRAINING_CONFIG, dict):
    raise ImproperlyConfigured(
        f"ML_TRAINING_CONFIG must be a JSON object of training settings, e.g. '{{\"max_epochs\": 5}}', "
        f"got {os.environ['ML_TRAINING_CONFIG']!r}"
    )
# Keep each open step's scores (ml.StepScore, shown in the admin) every time the queue is scored.
# Off by default: the queue needs only each solution's score, and a million rows per retrain cost
# 15 s of the 25 s a 1M-step rescoring takes with them (bench/results/loop.md).
ML_STORE_STEP_SCORES = env_bool("ML_STORE_STEP_SCORES", False)
# Where step features are kept once computed (ml.services.step_features); default MEDIA_ROOT/features.
# Workers that train and score must share it (a volume), like the model artifacts.
ML_FEATURE_STORE_ROOT = os.environ.get("ML_FEATURE_STORE_ROOT", "")
# The workspace's lease heartbeat: how often the page extends the annotator's lease.
WORKSPACE_HEARTBEAT_SECONDS = int(os.environ.get("WORKSPACE_HEARTBEAT_SECONDS", "60"))

# Automatic step labels (autolabel/): Monte Carlo rollouts against an OpenAI-compatible server.
AUTOLABEL_DEFAULT_BUDGET = int(os.environ.get("AUTOLABEL_DEFAULT_BUDGET", "200000"))  # completions per project
# The most a lead may set a project's budget to in the admin (completions cost money on the model
# server); empty: no cap. Superusers and `manage.py autolabel --budget` are not capped.
AUTOLABEL_MAX_BUDGET = int(os.environ["AUTOLABEL_MAX_BUDGET"]) if os.environ.get("AUTOLABEL_MAX_BUDGET") else None
AUTOLABEL_MAX_RETRIES = int(os.environ.get("AUTOLABEL_MAX_RETRIES", "4"))  # per request, then the job fails
AUTOLABEL_BACKOFF_S = float(os.environ.get("AUTOLABEL_BACKOFF_S", "1.0"))  # first retry wait; doubles each time
AUTOLABEL_REQUEST_TIMEOUT_S = float(os.environ.get("AUTOLABEL_REQUEST_TIMEOUT_S", "600"))
AUTOLABEL_STALE_SECONDS = int(os.environ.get("AUTOLABEL_STALE_SECONDS", "900"))  # no progress: the sweep restarts it
# Model servers inside the deployment a job may call (autolabel.endpoint_policy): hosts or patterns,
# comma-separated (`vllm,10.0.0.5,*.internal`; `*` = any). Public addresses need no entry.
AUTOLABEL_ALLOWED_HOSTS = env_list("AUTOLABEL_ALLOWED_HOSTS", "")

SPECTACULAR_SETTINGS = {
    "TITLE": "Steplabel API",
    "DESCRIPTION": "Step labels for process reward models (PRM800K format).",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI from the drf-spectacular-sidecar package: self-hosted, allowed by the CSP.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {
        "JobStatusEnum": "core.models.JobStatus",
        "AssignmentStatusEnum": "annotate.models.AssignmentStatus",
        "AutolabelJobStatusEnum": "autolabel.models.AutolabelStatus",
        "InclusionEnum": ["include", "exclude", "only"],
    },
    "PATH_CONVERTER_OVERRIDES": {"rowid": int},  # core.converters.RowIdConverter
}

# Celery: filesystem transport by default so the embedded setup needs no broker server.
# "localhost//" names the host kombu would assume anyway, so the worker does not warn that none was given
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "filesystem://localhost//")
if CELERY_BROKER_URL.startswith("filesystem://"):
    _queue_dir = VAR_DIR / "celery" / "queue"
    _processed_dir = VAR_DIR / "celery" / "processed"
    _control_dir = VAR_DIR / "celery" / "control"  # else kombu writes ./control in the working dir
    for _d in (_queue_dir, _processed_dir, _control_dir):
        _d.mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_queue_dir),
        "data_folder_out": str(_queue_dir),
        "processed_folder": str(_processed_dir),
        "store_processed": False,
        "control_folder": str(_control_dir),
    }
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = "default"
# Training on its own queue, and autolabel jobs (hours of HTTP calls each) on theirs, so neither
# holds the `default` workers that run imports, exports and the job sweep.
CELERY_TASK_ROUTES = {"ml.tasks.*": {"queue": "ml"}, "autolabel.tasks.*": {"queue": "autolabel"}}
# Fail fast when the broker is down (the job row stays `created` and the sweep re-sends it).
CELERY_BROKER_CONNECTION_TIMEOUT = 2
# A worker that lost Redis retries for ever (every 30 s at most): with Celery's 100 tries it exited
# ("Unrecoverable error") after a 47-minute outage and stayed down once Redis was back, unless
# something restarted it; jobs then waited `created` with a healthy broker.
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
# One sweep for every kind of job, on the default queue: a hung training run on the `ml` queue
# must not block its own watchdog (core.jobs).
CELERY_BEAT_SCHEDULE = {
    "sweep-jobs": {"task": "core.tasks.sweep_jobs", "schedule": 60.0, "options": {"queue": "default"}},
}
JOB_SWEEPERS = [
    "annotate.services.exports.jobs.sweep_stale_exports",
    "annotate.services.imports.jobs.sweep_stale_imports",
    "ml.services.sweep_training_runs",
    "autolabel.services.sweep",
]

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {
        "quiet_refusals": {"()": "config.log_filters.QuietRefusals"},
        "redact_secret_paths": {"()": "config.log_filters.RedactSecretPaths"},
    },
    "formatters": {
        "django.server": {"()": "django.utils.log.ServerFormatter", "format": "[{server_time}] {message}", "style": "{"}
    },
    "handlers": {
        "console": {"class": "logging.StreamHandler"},
        "django.server": {"class": "logging.StreamHandler", "formatter": "django.server"},
    },
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {
        # Django's own console handler (DEBUG only) printed every django.* line a second time beside
        # the root's: django.* records reach the root's handler alone (ADMINS is unset, so Django's
        # mail handler had nothing to do). runserver's request lines keep their handler and format.
        "django": {"handlers": [], "level": "INFO"},
        "django.server": {"handlers": ["django.server"], "level": "INFO", "propagate": False},
        # 401/403 are expected: one INFO line without a traceback (5xx stay errors with theirs).
        "django.request": {"filters": ["quiet_refusals", "redact_secret_paths"]},
    },
}
