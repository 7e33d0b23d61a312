"""Settings shared by every deployment; values come from the environment."""
import os
from pathlib import Path

import dj_database_url

from .secret import secret_key

BASE_DIR = Path(__file__).resolve().parent.parent.parent


def env(name, default=None):
    return os.environ.get(name, default)


def env_bool(name, default=False):
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


DEBUG = env_bool("GRANARY_DEBUG", False)


def env_list(name, default=""):
    return [item.strip() for item in env(name, default).split(",") if item.strip()]


ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost,testserver")
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS")

DATA_ROOT = Path(env("GRANARY_DATA_ROOT", str(BASE_DIR / "var"))).resolve()
STAGING_ROOT = DATA_ROOT / "staging"
CACHE_ROOT = DATA_ROOT / "cache"
VOLUMES_ROOT = DATA_ROOT / "volumes"
OUTBOX_ROOT = DATA_ROOT / "outbox"
# DJANGO_SECRET_KEY, or (the embedded default) a random key made on first run, kept in DATA_ROOT.
SECRET_KEY = secret_key(DATA_ROOT, env("DJANGO_SECRET_KEY"))

GRANARY_DAILY_INGEST_TB = float(env("GRANARY_DAILY_INGEST_TB", "1.0"))
GRANARY_DAILY_DISTRIBUTION_TB = float(env("GRANARY_DAILY_DISTRIBUTION_TB", "2.0"))

# Archive tier. Emulated drive delays are multiplied by the time scale: 0 = none (tests,
# benchmarks), 1 = real time.
GRANARY_TIME_SCALE = float(env("GRANARY_TIME_SCALE", "0"))
GRANARY_CACHE_BYTES = int(float(env("GRANARY_CACHE_GB", "64")) * 2**30)
# A download larger than this many bytes leaves the page cache behind it as the client
# acknowledges it (distribution/streaming.py); unset: a quarter of the memory the web server may
# use (RAM, or its cgroup's limit).
GRANARY_DROP_BEHIND_BYTES = (int(env("GRANARY_DROP_BEHIND_BYTES"))
                             if env("GRANARY_DROP_BEHIND_BYTES") else None)
# A range is served only from a cached file read in full and matched to the catalog within this
# long (a whole download is checked block by block as it is sent). The scrub re-reads the
# cache's clean files oldest-verified first, every SCRUB_EVERY_S, up to SCRUB_BYTES a run, which
# keeps a cache of up to SCRUB_BYTES x SCRUB_S / 2 / SCRUB_EVERY_S (144 GiB by default) within
# the bound. A day: rot is rare (disks return an unreadable sector about once per 10^15 bits
# read, silent corruption rarer still), so a day's exposure of range readers is small, while
# the scrub's two passes a day over the default 64 GiB cache read ~1.5 MB/s on average.
GRANARY_CACHE_SCRUB_S = float(env("GRANARY_CACHE_SCRUB_S", str(24 * 3600)))
GRANARY_CACHE_SCRUB_EVERY_S = float(env("GRANARY_CACHE_SCRUB_EVERY_S", "600"))
GRANARY_CACHE_SCRUB_BYTES = int(float(env("GRANARY_CACHE_SCRUB_GB", "2")) * 2**30)
GRANARY_CACHE_HIGH_WATERMARK = float(env("GRANARY_CACHE_HIGH_WATERMARK", "0.8"))
GRANARY_CACHE_LOW_WATERMARK = float(env("GRANARY_CACHE_LOW_WATERMARK", "0.4"))
GRANARY_DRIVE_ERROR_LIMIT = int(env("GRANARY_DRIVE_ERROR_LIMIT", "3"))
# A mover renews its drive's lease every third of this while it works (a long write included),
# so a mover killed -9 frees its drive, and its work returns to the queue, within this time.
GRANARY_DRIVE_LEASE_S = int(env("GRANARY_DRIVE_LEASE_S", "60"))
# Storage managers bound to silos: on, a drive's work goes to its silo's queue,
# archive.<silo name>, which only that silo's storage manager serves (a host per silo that
# drives that silo's drives); off (one archive worker drives every drive), to archive.
GRANARY_ARCHIVE_QUEUE_PER_SILO = env_bool("GRANARY_ARCHIVE_QUEUE_PER_SILO", False)
# With it on, the tick sends each silo's queue a heartbeat; a silo whose storage manager has
# not answered for this long counts as down: a recall with a copy elsewhere is served there.
GRANARY_SILO_STALE_S = float(env("GRANARY_SILO_STALE_S", "60"))
# The drive scheduler: smart or fifo, and the waits that trade latency for fewer mounts.
GRANARY_SCHEDULER = env("GRANARY_SCHEDULER", "smart")
GRANARY_WRITE_MAX_WAIT_S = float(env("GRANARY_WRITE_MAX_WAIT_S", "30"))
GRANARY_READ_MAX_WAIT_S = float(env("GRANARY_READ_MAX_WAIT_S", "5"))
GRANARY_DISMOUNT_DELAY_S = float(env("GRANARY_DISMOUNT_DELAY_S", "60"))
GRANARY_REMOUNT_DELAY_S = float(env("GRANARY_REMOUNT_DELAY_S", "300"))
# Read-back verification reads the disk, not the page cache, unless this is off.
GRANARY_VERIFY_FROM_DISK = env_bool("GRANARY_VERIFY_FROM_DISK", True)
# Where tape volumes live: "emulator" (tar files under VOLUMES_ROOT) or "scsi" (cartridges of a
# SCSI library, each labelled with its volume's label as barcode: scripts/tape-library.sh starts
# tgt's virtual one). The changer and drives are LUNs of an iSCSI target, or /dev/sg nodes.
GRANARY_TAPE = env("GRANARY_TAPE", "emulator")
GRANARY_SCSI = {
    "portal": env("GRANARY_SCSI_PORTAL", "127.0.0.1:3270"),
    "target": env("GRANARY_SCSI_TARGET", "iqn.2026-11.org.granary:vtl-3270"),
    "changer": env("GRANARY_SCSI_CHANGER", env("GRANARY_SCSI_CHANGER_LUN", "1")),
    "drives": env_list("GRANARY_SCSI_DRIVES", env("GRANARY_SCSI_DRIVE_LUNS", "2,3")),
    # logical drive -> SCSI drive (a unit of "drives"): "silo1-d1=2,silo1-d2=3"; a drive not
    # named is bound by its place among the drives (by silo, then name) modulo their number
    "bind": dict(item.split("=", 1) for item in env_list("GRANARY_SCSI_BIND") if "=" in item),
    # the lock files processes share the library by (a temporary folder's by default)
    "lock_dir": env("GRANARY_SCSI_LOCK_DIR", ""),
}
# Reconciliation (catalog, cache, volumes and copies compared, bytes read): beat runs a sampled
# one daily, reading this many copies and cached files at random; operators run full ones.
GRANARY_RECONCILE_SAMPLE = int(env("GRANARY_RECONCILE_SAMPLE", "1000"))
GRANARY_RECONCILE_EVERY_S = float(env("GRANARY_RECONCILE_EVERY_S", str(24 * 3600)))
# A run still "running" this long after it started lost its worker and is done again.
GRANARY_RECONCILE_STALE_S = float(env("GRANARY_RECONCILE_STALE_S", str(6 * 3600)))
# Object stores that hold copies (a Bucket names one by key): an S3-compatible endpoint and its
# keys, from the environment so no secret lives in the database. No endpoint, no object store.
GRANARY_OBJECT_STORES = {
    "default": {
        "endpoint_url": env("GRANARY_S3_ENDPOINT", ""),
        "access_key": env("GRANARY_S3_ACCESS_KEY", ""),
        "secret_key": env("GRANARY_S3_SECRET_KEY", ""),
        "region": env("GRANARY_S3_REGION", "us-east-1"),
    },
}
# Larger objects are sent in parts of this size (each part's MD5 checked by the server).
GRANARY_S3_PART_BYTES = int(float(env("GRANARY_S3_PART_MB", "64")) * 2**20)
# Files smaller than this are gathered into packs (one tar object of at most PACK_MB, a PUT per
# pack, each file read back by a ranged GET): an object per 4 KB file costs a request each.
GRANARY_S3_PACK_BELOW_BYTES = int(float(env("GRANARY_S3_PACK_BELOW_MB", "1")) * 2**20)
GRANARY_S3_PACK_BYTES = int(float(env("GRANARY_S3_PACK_MB", "32")) * 2**20)
# Seconds to wait for the object store to connect or answer before calling it unreachable.
GRANARY_S3_TIMEOUT_S = float(env("GRANARY_S3_TIMEOUT_S", "10"))
# Object movers: how many objects one mover sends at once, and its lease on the work it holds
# (renewed while it works; work whose mover died is taken again after it runs out).
GRANARY_OBJECT_CONCURRENCY = int(env("GRANARY_OBJECT_CONCURRENCY", "8"))
GRANARY_OBJECT_MOVERS = int(env("GRANARY_OBJECT_MOVERS", "1"))
# A mover works this long, then sends itself again behind the drives' tasks (0: until done).
GRANARY_OBJECT_SLICE_S = float(env("GRANARY_OBJECT_SLICE_S", "10"))
GRANARY_OBJECT_LEASE_S = int(env("GRANARY_OBJECT_LEASE_S", "60"))

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "backend.accounts",
    "backend.catalog",
    "backend.archive",
    "backend.metrics",
    "backend.events",
    "ingest",
    "distribution",
    "console",
    "bench",
    "demo",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "backend.accounts.signed_in.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

# A session's read brings its user and the user's roles: one query per portal request (#33).
SESSION_ENGINE = "backend.accounts.sessions"
AUTHENTICATION_BACKENDS = ["backend.accounts.signed_in.SessionUserBackend"]

ROOT_URLCONF = "backend.urls"
WSGI_APPLICATION = "backend.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
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
        env("DATABASE_URL", f"sqlite:///{DATA_ROOT / 'granary.sqlite3'}"),
        conn_max_age=int(env("DATABASE_CONN_MAX_AGE", "60")),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATA_ROOT.mkdir(parents=True, exist_ok=True)
    # Web, worker and beat share the file: wait for locks instead of failing.
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 30,
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
    }
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"]["TEST"] = {"NAME": str(DATA_ROOT / "test-granary.sqlite3")}
else:
    # No JIT: the planner overestimates joins through the visibility rules by orders of
    # magnitude (the collections list with its counts: 53 million rows estimated, 100,000 read),
    # and compiling such a query took 2.8 s of a 3 s answer. Short OLTP queries never gain.
    _options = DATABASES["default"].setdefault("OPTIONS", {})
    _options["options"] = f"{_options.get('options', '')} -c jit=off".strip()
    # Parameters bound by the server, and a statement run this many times on a connection
    # prepared there (psycopg): the same ORM query is planned once (a search page's database
    # CPU 6 -> 4 ms, #33). Off by default: a generic plan cannot use the partial indexes keyed
    # by state, and made the failures board's groups 20x slower at 1 M granules
    # (docs/scale-2026-11/mixed.md, Sessions 39-40).
    _prepare = int(env("GRANARY_DB_PREPARE_THRESHOLD", "0"))
    if _prepare > 0:
        _options.update(server_side_binding=True, prepare_threshold=_prepare)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = DATA_ROOT / "static"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
FRONTEND_DIST = BASE_DIR / "frontend" / "dist"
STATICFILES_DIRS = [FRONTEND_DIST] if FRONTEND_DIST.exists() else []
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG  # development: pick up a rebuilt web app without a restart

LOGIN_URL = "/admin/login/"

# Throttle counts live in the database (a cache table, made by a migration), so every web
# process and host counts against one limit; anything else may stay in each process's memory.
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    # a throttle's count per client: culling (a third of the rows, past MAX_ENTRIES) would
    # forget live counts, so there is room for many clients
    "shared": {"BACKEND": "django.core.cache.backends.db.DatabaseCache",
               "LOCATION": "granary_shared_cache", "OPTIONS": {"MAX_ENTRIES": 20000}},
}

# Single sign-on through an OpenID provider (none by default: local accounts only). The issuer
# is its URL (/.well-known/openid-configuration beneath it); bearer JWTs it issues are accepted
# when their audience is GRANARY_OIDC_AUDIENCE (default: the client id). Role rules in the
# environment ("GROUP=ROLE[:PROVIDER],...") add to those operators set in Configuration.
GRANARY_OIDC = {
    "issuer": env("GRANARY_OIDC_ISSUER", "").rstrip("/"),
    "client_id": env("GRANARY_OIDC_CLIENT_ID", ""),
    "client_secret": env("GRANARY_OIDC_CLIENT_SECRET", ""),
    "audience": env("GRANARY_OIDC_AUDIENCE", "") or env("GRANARY_OIDC_CLIENT_ID", ""),
    "name": env("GRANARY_OIDC_NAME", "your institution"),
    "scopes": env("GRANARY_OIDC_SCOPES", "openid email profile groups"),
    "groups_claim": env("GRANARY_OIDC_GROUPS_CLAIM", "groups"),
    "role_rules": env("GRANARY_OIDC_ROLE_RULES", ""),
    "leeway_s": int(env("GRANARY_OIDC_LEEWAY_S", "30")),
    "keys_ttl_s": int(env("GRANARY_OIDC_KEYS_TTL_S", "3600")),
}
# Personal API tokens made by POST /api/v1/auth/token/ (scripts) expire after this many days.
GRANARY_TOKEN_DAYS = float(env("GRANARY_TOKEN_DAYS", "90"))

REST_FRAMEWORK = {
    # Tokens first (personal tokens, and the OpenID provider's JWTs): a missing or bad
    # credential answers 401 with `WWW-Authenticate: Token`
    # (DRF takes the header from the first class; the session one has none, hence 403s).
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "backend.accounts.authentication.BearerAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    # Guessing passwords or minting tokens is slowed per client (address, or user once logged
    # in); a 429 says when to try again.
    "DEFAULT_THROTTLE_RATES": {
        "login": env("GRANARY_LOGIN_RATE", "10/min"),
        "token": env("GRANARY_TOKEN_RATE", "10/min"),
        # downloads per client; a 429 with Retry-After beyond it (empty: no limit)
        "download": env("GRANARY_DOWNLOAD_RATE", "1200/min"),
    },
    # Proxies in front that append to X-Forwarded-For (production: nginx); the client's address
    # is the one the nearest proxy wrote, so a client cannot pick its own by sending the header.
    "NUM_PROXIES": int(env("GRANARY_PROXIES", "0")),
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.AllowAny"],
    "DEFAULT_PARSER_CLASSES": [
        "backend.parsers.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_FILTER_BACKENDS": [
        "backend.filtering.StrictFilterBackend",
        "rest_framework.filters.OrderingFilter",
    ],
    "DEFAULT_PAGINATION_CLASS": "backend.catalog.pagination.CatalogCursorPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "backend.schema.GranaryAutoSchema",
    "EXCEPTION_HANDLER": "backend.api.exception_handler",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Granary API",
    "DESCRIPTION": "Ingest, archive and distribution of science data products.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "backend.schema.document_answers",
    ],
    # Catalog choice sets shared by the granule list and the granule page keep plain names.
    "ENUM_NAME_OVERRIDES": {
        "GranuleStateEnum": "backend.catalog.models.Granule.State",
        "FileRoleEnum": "backend.catalog.models.File.Role",
        "FileChecksumTypeEnum": "backend.catalog.models.File.ChecksumType",
        "UserRoleEnum": "backend.accounts.roles.ALL_ROLES",
        "GroupRoleEnum": "backend.accounts.roles.GROUP_ROLES",
        "RemedyEnum": "backend.actions.NAMES",
        "ActionEnum": "backend.archive.serializers.BULK_ACTIONS",
    },
}

# Celery: the database is the source of truth, messages are nudges.
CELERY_BROKER_URL = env("CELERY_BROKER_URL", "filesystem://")
BROKER_DIR = DATA_ROOT / "broker"
if CELERY_BROKER_URL.startswith("filesystem://"):
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "out"),
        "data_folder_out": str(BROKER_DIR / "out"),
        "control_folder": str(BROKER_DIR / "control"),
        "processed_folder": str(BROKER_DIR / "processed"),
        "store_processed": False,
        # kombu looks for new messages once a second by default: a second per hop (request ->
        # ingest chunk -> archive tick -> mover) that RabbitMQ does not cost; a tenth of one
        # is a listdir, ten times a second, per worker
        "polling_interval": float(env("GRANARY_BROKER_POLL_S", "0.1")),
    }
    for _folder in ("out", "control", "processed"):
        (BROKER_DIR / _folder).mkdir(parents=True, exist_ok=True)
    if CELERY_BROKER_URL == "filesystem://":
        # the folders above are the broker; naming a host only stops kombu warning, on every
        # message, that it "reverts to localhost"
        CELERY_BROKER_URL = "filesystem://localhost//"
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
# A broker that is away delays a request by about this much at most: publishing a nudge gives
# up (backend.nudges logs it; the work is stored and the sweepers start it) instead of hanging.
GRANARY_BROKER_TIMEOUT_S = float(env("GRANARY_BROKER_TIMEOUT_S", "2"))
CELERY_BROKER_CONNECTION_TIMEOUT = GRANARY_BROKER_TIMEOUT_S
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 1, "interval_start": 0,
                                    "interval_step": 0.2, "interval_max": 0.2}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env("GRANARY_LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}

EMAIL_BACKEND = env("EMAIL_BACKEND", "django.core.mail.backends.filebased.EmailBackend")
EMAIL_FILE_PATH = DATA_ROOT / "mail"
DEFAULT_FROM_EMAIL = env("DEFAULT_FROM_EMAIL", "granary@localhost")
EMAIL_HOST = env("EMAIL_HOST", "localhost")
EMAIL_PORT = int(env("EMAIL_PORT", "25"))
EMAIL_HOST_USER = env("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = env("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
CELERY_BEAT_SCHEDULE_FILENAME = str(DATA_ROOT / "celerybeat-schedule")
CELERY_BEAT_SCHEDULE = {
    "queue-heartbeats": {"task": "backend.metrics.send_heartbeats", "schedule": 60.0},
    "archive-tick": {"task": "backend.archive.tick", "schedule": 10.0},
    "archive-compact-totals": {"task": "backend.archive.compact_totals", "schedule": 60.0},
    "archive-reconcile": {"task": "backend.archive.reconcile_sample",
                          "schedule": GRANARY_RECONCILE_EVERY_S},
    "archive-scrub-cache": {"task": "backend.archive.scrub_cache",
                            "schedule": GRANARY_CACHE_SCRUB_EVERY_S},
}

# Ingest: granules move through the pipeline in chunks (one task each) under a lease; the sweeper
# re-kicks work idle for longer than the stale time; staged copies go after the retention.
GRANARY_INGEST_CHUNK = int(env("GRANARY_INGEST_CHUNK", "1000"))
# ... and a chunk ends at the granule that brings it to this many bytes: large granules are
# checked side by side by the workers, and the first go on to the archive while others are read.
GRANARY_INGEST_CHUNK_BYTES = int(float(env("GRANARY_INGEST_CHUNK_MB", "256")) * 2**20)
# A chunk with less than this to checksum is staged and validated in one write: its "staged"
# would last milliseconds; above it, "staged" shows while the checksums are read.
GRANARY_INGEST_QUICK_BYTES = int(float(env("GRANARY_INGEST_QUICK_MB", "256")) * 2**20)
GRANARY_INGEST_MAX_GRANULES = int(env("GRANARY_INGEST_MAX_GRANULES", "50000"))
# A bulk request of 10,000 granules is ~10 MB of JSON: room for the largest request allowed.
DATA_UPLOAD_MAX_MEMORY_SIZE = int(float(env("GRANARY_INGEST_MAX_BODY_MB", "64")) * 2**20)
# A worker's lease on the granules it holds, renewed every third of this while it works (a large
# granule's checksum included): a killed worker's granules are sent again within about this time.
GRANARY_INGEST_LEASE_S = int(env("GRANARY_INGEST_LEASE_S", "60"))
GRANARY_INGEST_STALE_S = int(env("GRANARY_INGEST_STALE_S", "600"))
# Granules no worker has taken yet are sent again after this long (their message may never
# have reached the broker); each waiting request costs at most one more message per period.
GRANARY_INGEST_UNSENT_S = int(env("GRANARY_INGEST_UNSENT_S", "60"))
GRANARY_INGEST_MAX_ATTEMPTS = int(env("GRANARY_INGEST_MAX_ATTEMPTS", "5"))
GRANARY_INGEST_DEFAULT_CHECKSUM = env("GRANARY_INGEST_DEFAULT_CHECKSUM", "MD5")
GRANARY_UPLOAD_MAX_BYTES = int(float(env("GRANARY_UPLOAD_MAX_GB", "100")) * 2**30)
GRANARY_STAGING_RETENTION_S = int(env("GRANARY_STAGING_RETENTION_S", "3600"))
# A dropped file is complete when unchanged this long, or when NAME.done sits beside it.
GRANARY_DROP_STABLE_S = float(env("GRANARY_DROP_STABLE_S", "30"))
SPECTACULAR_SETTINGS.setdefault("ENUM_NAME_OVERRIDES", {}).update({
    "IngestRequestStateEnum": "ingest.models.IngestRequest.State",
    "IngestGranuleStateEnum": "ingest.models.IngestGranule.State",
    "PdrStateEnum": "ingest.models.Pdr.State",
})
CELERY_BEAT_SCHEDULE.update({
    "ingest-sweep": {"task": "ingest.sweep", "schedule": 30.0},
    "ingest-poll-staging": {"task": "ingest.poll_staging", "schedule": 15.0},
    "ingest-clean-staging": {"task": "ingest.clean_staging", "schedule": 300.0},
})
