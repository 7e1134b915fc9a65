"""Settings for Lev MCP, every value from the environment with a safe local default.

`LEV_ENV=production` switches on the production profile, which refuses to start on unsafe
settings (no SECRET_KEY, DEBUG on, empty ALLOWED_HOSTS).

Grouped by concern, each group under a `# --- ` header, in this order:

* Reading the environment — the env_* helpers (the only reads of os.environ in the product);
* Profile — LEV_ENV, DEBUG, SECRET_KEY, ALLOWED_HOSTS;
* OAuth 2.1 authorization server — the issuer, CIMD, registration, step-up; the credential cache; the
  production profile's refusals;
* Apps, middleware, URLs and templates — INSTALLED_APPS (the demo app by LEV_DEMO), MIDDLEWARE;
* Database — DATABASES, statement and connect timeouts, SQLite's and PostgreSQL's own options;
* Sign-in lockout (django-axes), Content-Security-Policy (django-csp);
* Language, time and dates; static files and storage; Redis and the cache;
* REST API and its OpenAPI schema — request bounds, REST_FRAMEWORK, SPECTACULAR_SETTINGS;
* OAuth sign-in pages and the toolkit — OAUTH2_PROVIDER;
* MCP endpoint — /mcp's server, body and response bounds, origins; the demo key file;
* Resilience — retries, the breaker, rate limits, idempotency, metrics, outages;
* Celery — broker, time limits, publish retries; history imports' jobs; mail and outreach; beat's periodic jobs; lender
  signals and activity;
* Logging; production hardening;
* Lender discovery — the searches' queue, attempts, limits, retention, reuse, staleness;
* /health — probe timeout, worker heartbeat.
"""

from __future__ import annotations

import datetime as dt
import ipaddress as _ipaddress
import os
from pathlib import Path

import dj_database_url
from csp import constants as csp_constants
from django.core.exceptions import ImproperlyConfigured

from lev import enums as _enums
from lev import limits
from lev.accounts import scopes as scope_table

BASE_DIR = Path(__file__).resolve().parent.parent


# --- Reading the environment -------------------------------------------------------------------
# Every environment variable the code uses is read here, through these five helpers, and only
# here (tests/lev/test_settings.py checks that no other module reads os.environ); the rest of the
# code reads `django.conf.settings` when it needs a value, never at import. They are a few lines of
# our own rather than django-environ on purpose, because django-environ would change what a value
# means: it reads an empty value as False / an error instead of the default (here an empty
# variable is as good as unset), resolves a value that starts with "$" as the name of another
# variable (a SECRET_KEY or token beginning with "$" would silently become something else), keeps
# the spaces of list items, and parses floats by deleting every character but digits, "," "." and
# "-" ("1e3" becomes 13.0). DATABASE_URL is parsed by dj-database-url.
def env_str(name: str, default: str) -> str:
    """The variable as it is (an empty value stays empty), or `default` when unset."""
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return int(value) if value not in (None, "") else default


def env_float(name: str, default: float) -> float:
    value = os.environ.get(name)
    return float(value) if value not in (None, "") else default


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    if value is None:
        return default
    return [item.strip() for item in value.split(",") if item.strip()]


# --- Profile: development (`make run`, tests) or production (LEV_ENV=production) ----------------------
LEV_ENV = env_str("LEV_ENV", "development").strip().lower()
PRODUCTION = LEV_ENV == "production"

# Off unless asked for, everywhere: `make run` serves the product's own error pages (lev/templates/400.html,
# 403.html, 404.html, 500.html) as production does, never a debug page with a traceback and file paths.
# DEBUG=true turns Django's debug pages on while developing (refused in production, below).
DEBUG = env_bool("DEBUG", False)
SECRET_KEY = env_str("SECRET_KEY", "")
# Earlier keys, comma-separated, while sessions, signed links and the mailboxes' encrypted passwords made
# with them still need reading (Django's SECRET_KEY_FALLBACKS).
SECRET_KEY_FALLBACKS = env_list("SECRET_KEY_FALLBACKS", [])
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", [] if PRODUCTION else ["127.0.0.1", "localhost", "[::1]", "testserver"])

# --- OAuth 2.1 authorization server for /mcp (docs/oauth.md) ----------------------------------
# The site's public address (https://lev.example.com): the OAuth issuer and the resource tokens are
# bound to. Unset, both come from each request's scheme and Host (development).
LEV_PUBLIC_URL = env_str("LEV_PUBLIC_URL", "").strip().rstrip("/")
# Client ID Metadata Documents on this machine's loopback addresses (development and tests only), and a
# local CA to trust for them.
LEV_OAUTH_CIMD_ALLOW_LOOPBACK = env_bool("LEV_OAUTH_CIMD_ALLOW_LOOPBACK", False)
LEV_OAUTH_CIMD_CA_FILE = env_str("LEV_OAUTH_CIMD_CA_FILE", "")
# Dynamic Client Registration is open, so it is rate-limited per client address.
LEV_OAUTH_REGISTRATION_RATE = env_str("LEV_OAUTH_REGISTRATION_RATE", "20/hour")
# A tools/call with an OAuth token that lacks the tool's scope answers HTTP 403 with the
# `insufficient_scope` challenge, so the client can ask the person for it (step-up); off, it is only
# the FORBIDDEN tool result (which the 403's body carries too).
LEV_OAUTH_STEP_UP_CHALLENGE = env_bool("LEV_OAUTH_STEP_UP_CHALLENGE", True)

# How long a process keeps an API key or access token it found valid, and the membership it acts
# under, before checking the database again (lev.accounts.credential_cache). The bound on a revocation: at once
# in the process that made it (admin, management command, connected apps, /oauth/revoke/), within this
# many seconds in every other process. Expiry is checked on every request. 0 = check every request.
LEV_AUTH_CACHE_SECONDS = env_float("LEV_AUTH_CACHE_SECONDS", 5.0)

# The official MCP conformance suite's diagnostic tools (test_error_handling, test_missing_capability,
# test_input_required_result_*, ...; mcp_tools.conformance) on /mcp: for `make conformance`
# and tests only, never production (refused below). They are an app of their own, installed when this
# is on or LEV_MCP_CONFORMANCE_APP is (the test run sets it, tests/settings_apps.py, so a test can turn
# the tools on); installed and off, the app answers nothing.
LEV_MCP_CONFORMANCE_FIXTURE = env_bool("LEV_MCP_CONFORMANCE_FIXTURE", False)
LEV_MCP_CONFORMANCE_APP = LEV_MCP_CONFORMANCE_FIXTURE or env_bool("LEV_MCP_CONFORMANCE_APP", False)

if PRODUCTION:
    problems = []
    if LEV_OAUTH_CIMD_ALLOW_LOOPBACK:
        problems.append("LEV_OAUTH_CIMD_ALLOW_LOOPBACK is for local development only")
    if LEV_MCP_CONFORMANCE_FIXTURE:
        problems.append("LEV_MCP_CONFORMANCE_FIXTURE is for the conformance suite and tests only")
    if len(SECRET_KEY) < 50 or SECRET_KEY.startswith("django-insecure"):
        problems.append("SECRET_KEY must be set to a long random value")
    if DEBUG:
        problems.append("DEBUG must be off")
    if not ALLOWED_HOSTS:
        problems.append("ALLOWED_HOSTS must list the site's host names")
    if problems:
        raise ImproperlyConfigured("Unsafe production settings: " + "; ".join(problems))
elif not SECRET_KEY:
    # Local development only: the production profile above never gets here.
    SECRET_KEY = "django-insecure-local-development-key-not-for-production"

# --- Apps, middleware, URLs and templates -------------------------------------------------------------
INSTALLED_APPS = [
    "lev.admin_apps.LevAdminConfig",  # django.contrib.admin on Lev's site (lev/admin_site.py)
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "axes",
    "oauth2_provider",
    # The history of placements and term sheets (status changes, the winner, removals): docs/notes.md.
    "simple_history",
    "lev",
    "lev.accounts",
    "lev.idempotency",
    "lev.oauth",
    "lenders",
    "deals",
    "mcp_tools",
    "csp",  # Content-Security-Policy on every page (below)
]
# The demo's seeders and `seed_demo` (deals/demo/): an app of their own, installed where a demo belongs —
# development (`make run`) and tests by default, production only when asked for (LEV_DEMO=true: a
# trial stack's `manage.py seed_demo`). It has no models, so this changes no table.
LEV_DEMO = env_bool("LEV_DEMO", not PRODUCTION)
if LEV_DEMO:
    INSTALLED_APPS.append("deals.demo.apps.DemoConfig")
if LEV_MCP_CONFORMANCE_APP:
    INSTALLED_APPS.append("mcp_tools.conformance")

MIDDLEWARE = [
    "lev.middleware.RequestIdMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # Django's, but a missing trailing slash under /api/ is a 308 that keeps the method and body.
    "lev.middleware.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Hands the request to django-simple-history, so a placement's or term sheet's history records who
    # changed it. An API call's user is set on the request when DRF authenticates it (a key's user);
    # the MCP tools' in-process calls do its part themselves (mcp_tools.client.direct_dispatch).
    "simple_history.middleware.HistoryRequestMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "lev.middleware.ApiErrorMiddleware",
    # Turns an admin login refused for too many failures into the lockout page (429).
    "axes.middleware.AxesMiddleware",
]

# The axes backend only counts and refuses login attempts (admin login form); ModelBackend checks
# the password. API keys (lev.accounts.auth) never go through authenticate(), so axes never sees them.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]

ROOT_URLCONF = "lev.urls"
WSGI_APPLICATION = "lev.wsgi.application"
ASGI_APPLICATION = "lev.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "lev" / "templates"],
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

# --- Database -----------------------------------------------------------------------------------------
DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL", "") or f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
        conn_max_age=env_int("DB_CONN_MAX_AGE", 60),
        conn_health_checks=True,
    )
}
# Every database statement is bounded, so a tool call served in-process is bounded like one sent
# over HTTP (LEV_API_TIMEOUT_SECONDS): a statement past the limit is cancelled, the API answers 503
# UPSTREAM_UNAVAILABLE, and the MCP layer retries and counts it exactly as an HTTP timeout. 0 = off
# (e.g. for a one-off migration of a large table).
LEV_DB_STATEMENT_TIMEOUT_MS = env_int(
    "LEV_DB_STATEMENT_TIMEOUT_MS", int(env_float("LEV_API_TIMEOUT_SECONDS", 10.0) * 1000)
)
LEV_DB_CONNECT_TIMEOUT_SECONDS = env_int("LEV_DB_CONNECT_TIMEOUT_SECONDS", 3)
# The PostgreSQL connection health check (lev.postgresql) runs `SELECT 1` on a reused connection last
# vouched for this many seconds ago or more (and whenever its socket has something to say).
LEV_DB_HEALTH_CHECK_IDLE_SECONDS = env_float("LEV_DB_HEALTH_CHECK_IDLE_SECONDS", 1.0)
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The embedded default (`make run`: runserver, a thread per request; in-process jobs) has many
    # writers to one file. SQLite allows one writer at a time, so each must wait its turn, never fail:
    # * transaction_mode IMMEDIATE: a transaction takes the write lock when it begins. With the
    #   default (DEFERRED) a transaction that read first and then writes must upgrade its lock, and
    #   when another writer holds it SQLite answers "database is locked" at once, without waiting
    #   (it cannot wait: that would deadlock), however long the busy timeout is.
    # * timeout (the busy timeout): a writer waits for the lock at most as long as a statement may
    #   run elsewhere, then it is an outage (503) like a PostgreSQL lock_timeout.
    # * WAL: readers never wait for the writer nor the writer for readers; synchronous=NORMAL is the
    #   setting WAL is made for (durable across application crashes; a power cut may lose the last
    #   commits, never corrupt the file). An in-memory database (the tests') ignores journal_mode.
    _options = DATABASES["default"].setdefault("OPTIONS", {})
    _options["timeout"] = max(1, LEV_DB_STATEMENT_TIMEOUT_MS / 1000 or 20)
    _options["transaction_mode"] = "IMMEDIATE"
    _options["init_command"] = "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL"
    DATABASES["default"]["CONN_MAX_AGE"] = 0
elif DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # The connection health check (CONN_HEALTH_CHECKS, above) without a `SELECT 1` per request in steady
    # use: it runs when the reused connection's socket has something to say or the connection has been
    # idle a while (lev.postgresql: Django's backend, public API only).
    DATABASES["default"]["ENGINE"] = "lev.postgresql"
    _options = DATABASES["default"].setdefault("OPTIONS", {})
    _options.setdefault("connect_timeout", LEV_DB_CONNECT_TIMEOUT_SECONDS)
    # Server-side parameter binding with prepared statements: psycopg prepares a query once a connection
    # has run it LEV_DB_PREPARE_THRESHOLD times (5), and PostgreSQL stops planning it again on every
    # request. Both are needed: Django passes psycopg `prepare_threshold=None` (never prepare) unless
    # OPTIONS names it, so binding alone prepared nothing. The hot reads join several tables, and their
    # planning costs more than their execution (figures: docs/benchmarks.md, issue 24);
    # tests/lev/test_prepared_statements.py checks PostgreSQL holds the plan. Off: Django's default,
    # client-side binding, nothing prepared (the A/B), and the setting a pgbouncer in transaction mode needs.
    if env_bool("LEV_DB_SERVER_SIDE_BINDING", True):
        _options.setdefault("server_side_binding", True)
        _options.setdefault("prepare_threshold", env_int("LEV_DB_PREPARE_THRESHOLD", 5))
    if LEV_DB_STATEMENT_TIMEOUT_MS:
        _options["options"] = (
            f"{_options.get('options', '')} -c statement_timeout={LEV_DB_STATEMENT_TIMEOUT_MS}"
            f" -c lock_timeout={LEV_DB_STATEMENT_TIMEOUT_MS}"
        ).strip()

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Sign-in lockout (django-axes): the admin's login and the OAuth sign-in page -------------------
# After this many failed sign-ins of one username from one IP address, that pair is refused
# (even with the right password) for the cool-off; a success resets the pair's count.
AXES_FAILURE_LIMIT = env_int("LEV_ADMIN_LOGIN_FAILURE_LIMIT", 5)
# ...and after this many failures from one IP address, whatever the usernames tried (password
# spraying), that address is refused for the cool-off. Higher than the pair's limit so that people
# sharing an address (an office) are not locked out by one person's typos. lev.login_lockout.
LEV_LOGIN_FAILURE_LIMIT_PER_IP = env_int("LEV_LOGIN_FAILURE_LIMIT_PER_IP", 30)
AXES_COOLOFF_TIME = dt.timedelta(minutes=env_int("LEV_ADMIN_LOGIN_COOLOFF_MINUTES", 15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"], "ip_address"]
AXES_HANDLER = "lev.login_lockout.LoginLockoutHandler"
AXES_RESET_ON_SUCCESS = True
# The client address is REMOTE_ADDR; behind reverse proxies named in LEV_TRUSTED_PROXIES (IPs or
# CIDRs, comma-separated), the nearest X-Forwarded-For address that is not one of them. Only those
# proxies' additions are believed: a client's own X-Forwarded-For is never trusted.
LEV_TRUSTED_PROXIES = env_list("LEV_TRUSTED_PROXIES", [])
for _proxy in LEV_TRUSTED_PROXIES:
    try:
        _ipaddress.ip_network(_proxy, strict=False)
    except ValueError as _error:
        raise ImproperlyConfigured(f"LEV_TRUSTED_PROXIES: {_proxy!r} is not an IP address or network") from _error
AXES_CLIENT_IP_CALLABLE = "lev.login_lockout.client_ip"

# --- Content-Security-Policy (django-csp) ------------------------------------------------------
# Every response carries it (on JSON it is inert and harmless). Everything an HTML page loads is
# served by the site itself: the admin and its own static files, Swagger UI from
# drf-spectacular-sidecar, the OAuth sign-in and consent pages. Inline <style>/<script> blocks carry
# the request's nonce ({{ request.csp_nonce }}); no inline style attributes or event handlers are
# allowed. There is no form-action: the consent form's answer is a redirect to the client's own
# redirect URI, which browsers check against form-action too. tests/admin/test_csp.py and the browser
# test (no violations on the admin, Swagger UI and the consent page) hold it.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [csp_constants.SELF],
        "script-src": [csp_constants.SELF, csp_constants.NONCE],
        "style-src": [csp_constants.SELF, csp_constants.NONCE],
        # data: for the icons Swagger UI's and the admin's stylesheets embed.
        "img-src": [csp_constants.SELF, "data:"],
        "font-src": [csp_constants.SELF],
        "connect-src": [csp_constants.SELF],
        "object-src": [csp_constants.NONE],
        "base-uri": [csp_constants.SELF],
        "frame-ancestors": [csp_constants.NONE],
    },
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# --- Language, time and dates -------------------------------------------------------------------------
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
# One date format everywhere the admin shows a date ("Dec 7, 2026") or a moment ("Dec 7, 2026 01:21"):
# lev/formats/en/formats.py, ahead of Django's English locale ("Dec. 7, 2026, 1:21 a.m.").
FORMAT_MODULE_PATH = ["lev.formats"]

# --- Static files and storage -------------------------------------------------------------------------
STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
# Outside production (`make run`, tests) WhiteNoise serves the apps' static files where they are, with no
# `collectstatic`, as runserver only does with DEBUG on; production serves the collected, hashed ones.
WHITENOISE_USE_FINDERS = not PRODUCTION

# History files uploaded for an import (deals.history.jobs): a private folder, outside MEDIA and STATIC,
# never served (no base_url; the REST door serves only a job's refused-rows report, never the file).
LEV_HISTORY_UPLOAD_DIR = env_str("LEV_HISTORY_UPLOAD_DIR", str(BASE_DIR / "private" / "history-imports"))
_HISTORY_STORAGE = {"BACKEND": "django.core.files.storage.FileSystemStorage",
                    "OPTIONS": {"location": LEV_HISTORY_UPLOAD_DIR,
                                "file_permissions_mode": 0o600, "directory_permissions_mode": 0o700}}
# A deal's documents (deals.documents): the local file system on the embedded default, never served by
# a URL of its own (each download is authorised by deals.documents.api); S3-compatible object storage
# when LEV_DOCUMENTS_S3_BUCKET is set (docs/documents.md).
LEV_DOCUMENTS_DIR = env_str("LEV_DOCUMENTS_DIR", str(BASE_DIR / "private" / "documents"))
_DOCUMENTS_STORAGE = {"BACKEND": "django.core.files.storage.FileSystemStorage",
                      "OPTIONS": {"location": LEV_DOCUMENTS_DIR,
                                  "file_permissions_mode": 0o600, "directory_permissions_mode": 0o700}}
# S3-compatible object storage (MinIO, AWS S3...) when a bucket is named: private objects (no ACL is
# ever set public), downloads through signed URLs valid LEV_DOCUMENTS_URL_SECONDS. The keys come from
# the environment (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, read by boto3), never from this file.
LEV_DOCUMENTS_S3_BUCKET = env_str("LEV_DOCUMENTS_S3_BUCKET", "")
LEV_DOCUMENTS_S3_ENDPOINT_URL = env_str("LEV_DOCUMENTS_S3_ENDPOINT_URL", "")
LEV_DOCUMENTS_S3_REGION = env_str("LEV_DOCUMENTS_S3_REGION", "us-east-1")
LEV_DOCUMENTS_URL_SECONDS = env_int("LEV_DOCUMENTS_URL_SECONDS", 300)


def documents_s3_storage(*, bucket: str, endpoint_url: str | None, region: str, url_seconds: int) -> dict:
    """STORAGES["deal_documents"] on S3-compatible object storage (the tests build theirs with it too):
    objects private (no ACL is sent: the bucket's own, private by default), downloads by signed URLs
    valid `url_seconds`, a name never overwritten, path-style addressing (MinIO), and a client that
    gives up on an unreachable storage in seconds (the upload answers 503) rather than minutes."""
    from botocore.config import Config

    return {"BACKEND": "storages.backends.s3.S3Storage",
            "OPTIONS": {"bucket_name": bucket, "endpoint_url": endpoint_url or None, "region_name": region,
                        "default_acl": None, "querystring_auth": True, "querystring_expire": url_seconds,
                        "file_overwrite": False, "addressing_style": "path", "signature_version": "s3v4",
                        "client_config": Config(connect_timeout=5, read_timeout=60,
                                                retries={"max_attempts": 2, "mode": "standard"},
                                                s3={"addressing_style": "path"}, signature_version="s3v4")}}


if LEV_DOCUMENTS_S3_BUCKET:
    _DOCUMENTS_STORAGE = documents_s3_storage(bucket=LEV_DOCUMENTS_S3_BUCKET,
                                              endpoint_url=LEV_DOCUMENTS_S3_ENDPOINT_URL,
                                              region=LEV_DOCUMENTS_S3_REGION, url_seconds=LEV_DOCUMENTS_URL_SECONDS)
# The most a document's upload may be (413 past it, from its Content-Length before it is read, and
# by the upload handler while it streams: deals.documents.api), and the most a zip (an XLSX) it holds
# may declare once inflated (deals.documents.files: a bomb past it).
LEV_DOCUMENT_UPLOAD_MAX_BYTES = env_int("LEV_DOCUMENT_UPLOAD_MAX_BYTES", 200 * 1024 * 1024)
LEV_DOCUMENT_UNZIPPED_MAX_BYTES = env_int("LEV_DOCUMENT_UNZIPPED_MAX_BYTES", 512 * 1024 * 1024)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    "history_imports": _HISTORY_STORAGE,
    "deal_documents": _DOCUMENTS_STORAGE,
}

# --- Redis and the cache ------------------------------------------------------------------------------
REDIS_URL = env_str("REDIS_URL", "")

if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": env_str("CACHE_KEY_PREFIX", "lev"),
            # Bounded, so a frozen Redis costs a request at most this long, never a hang.
            "OPTIONS": {"socket_timeout": 1.0, "socket_connect_timeout": 1.0},
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# --- REST API and its OpenAPI schema ------------------------------------------------------------------
# Request bounds (lev.limits); past them the API answers 413 / 400 in its one error body.
DATA_UPLOAD_MAX_MEMORY_SIZE = limits.REQUEST_BODY_MAX_BYTES
DATA_UPLOAD_MAX_NUMBER_FIELDS = limits.REQUEST_FIELDS_MAX

REST_FRAMEWORK = {
    # OAuth access tokens first: its 401 challenge says where the OAuth metadata is (RFC 9728); it
    # leaves API keys (lev_sk_…) to the next class. Last, the credential /mcp verified, handed to the
    # view a tool calls in process (lev.accounts.auth.PreAuthenticated).
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "lev.oauth.authentication.OAuthTokenAuthentication",
        "lev.accounts.auth.ApiKeyAuthentication",
        "rest_framework.authentication.SessionAuthentication",
        "lev.accounts.auth.PreAuthenticated",
    ],
    # Every view names the scope each of its methods needs (`required_scopes`, lev.accounts.scopes).
    "DEFAULT_PERMISSION_CLASSES": [
        "rest_framework.permissions.IsAuthenticated",
        "lev.accounts.permissions.HasRequiredScope",
    ],
    "DEFAULT_PAGINATION_CLASS": "lev.pagination.StandardPagination",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # JSON in, JSON out: no browsable-API HTML, no form bodies. An Accept or ?format= that JSON
    # cannot serve still gets JSON (lev.parsers), never a 406 or 404 page.
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["lev.parsers.JSONParser"],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "lev.parsers.JsonFirstContentNegotiation",
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
    "EXCEPTION_HANDLER": "lev.errors.api_exception_handler",
    "DEFAULT_THROTTLE_CLASSES": [
        "lev.throttling.UserReadThrottle",
        "lev.throttling.UserWriteThrottle",
    ],
    "COERCE_DECIMAL_TO_STRING": False,
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Lev MCP API",
    "DESCRIPTION": "Commercial real estate deals and lender directory.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # The docs pages load Swagger UI and Redoc from this site's static files, not a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # The credentials a client sends; lev.accounts.auth.PreAuthenticated is this process's own hand-over, never a
    # client's, so the schema does not describe it.
    "AUTHENTICATION_WHITELIST": [
        "lev.oauth.authentication.OAuthTokenAuthentication",
        "lev.accounts.auth.ApiKeyAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    # One named enum per domain list, shared by every serializer that uses it.
    "ENUM_NAME_OVERRIDES": {
        "LoanTypeEnum": "lev.enums.LOAN_TYPES",
        "TransactionTypeEnum": "lev.enums.TRANSACTION_TYPES",
        "BusinessPlanEnum": "lev.enums.BUSINESS_PLANS",
        "AssetTypeEnum": _enums.choices(_enums.ASSET_TYPES),  # (value, label) pairs: a list of them too
        "StateEnum": "lev.enums.US_STATES",
        # Placements and term sheets: (value, label) pairs as their model fields and EnumFields have
        # them, so one name covers the model's and the input's use of a list.
        # A dotted path, not an import: the statuses are the deals app's workflow table, above lev.
        "PlacementStatusEnum": "deals.placements.workflow.STATUS_CHOICES",
        "QuoteTypeEnum": _enums.choices(_enums.QUOTE_TYPES),
        "RateTypeEnum": _enums.choices(_enums.RATE_TYPES),
        "RateIndexEnum": _enums.choices(_enums.RATE_INDEXES),
        "RecourseEnum": _enums.choices(_enums.RECOURSE_TYPES),
        # Two more fields named `status`: a deal list's (active, closed, …) and a history import's.
        "DealStatusEnum": _enums.choices(_enums.DEAL_STATUSES),
        "HistoryImportStatusEnum": "deals.history.models.HistoryImport.Status",
        # Three fields named `kind` (a company's, a pipeline stage's, a credential's): one name each.
        "CompanyKindEnum": _enums.choices(_enums.COMPANY_KINDS),
        "StageKindEnum": _enums.choices(_enums.STAGE_KINDS),
        "CredentialKindEnum": "lev.accounts.serializers.CREDENTIAL_KINDS",
        # A summary's level of detail (deals/summaries), not a generic "detail".
        "SummaryDetailEnum": _enums.choices(_enums.SUMMARY_DETAILS),
        "NoteKindEnum": _enums.choices(_enums.NOTE_KINDS),
        "TimelineKindEnum": _enums.choices(_enums.TIMELINE_KINDS),
        # Outreach (deals.outreach): an email's kind, an email's and a send's status.
        "OutreachKindEnum": _enums.choices(_enums.OUTREACH_KINDS),
        "OutboundEmailStatusEnum": "deals.outreach.models.OutboundEmail.Status",
        "OutreachSendStatusEnum": "deals.outreach.models.OutreachSend.Status",
        "DocumentKindEnum": _enums.choices(_enums.DOCUMENT_KINDS),
        "DocumentSourceEnum": _enums.choices(_enums.DOCUMENT_SOURCES),
        # The deal's figures a rent roll or T-12 may set (deals.documents.figures), not a generic "fields".
        "DocumentFigureEnum": "deals.documents.figures.models.FIGURE_FIELD_CHOICES",
        # A lender program's status (its output and the account's own programs' input, issue 38).
        "LenderProgramStatusEnum": _enums.choices(("active", "inactive")),
    },
}

# --- OAuth sign-in pages and the toolkit (docs/oauth.md) ----------------------------------------------
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "oauth-connected-apps"

OAUTH2_PROVIDER = {
    "SCOPES": dict(scope_table.SCOPES),
    "DEFAULT_SCOPES": ["__all__"],
    "OAUTH2_VALIDATOR_CLASS": "lev.oauth.validators.LevOAuth2Validator",
    "OAUTH2_SERVER_CLASS": "lev.oauth.validators.S256OnlyServer",
    # Short-lived access tokens (the MCP specification's SHOULD); refresh tokens rotate on every use and
    # a reused one revokes its whole family (RFC 9700).
    "ACCESS_TOKEN_EXPIRE_SECONDS": env_int("LEV_OAUTH_ACCESS_TOKEN_SECONDS", 3600),
    "REFRESH_TOKEN_EXPIRE_SECONDS": env_int("LEV_OAUTH_REFRESH_TOKEN_DAYS", 30) * 86400,
    "AUTHORIZATION_CODE_EXPIRE_SECONDS": 60,
    "ROTATE_REFRESH_TOKEN": True,
    "REFRESH_TOKEN_REUSE_PROTECTION": True,
    "PKCE_REQUIRED": True,
    # RFC 9700: no implicit or password grant, S256 only, tokens in the header only, the `iss`
    # authorization-response parameter (RFC 9207), tokens stored as digests.
    "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
    "COMPLIANT_BCP_RFC9700_ACCESS_TOKEN_TRANSPORT": True,
    "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": True,
    "COMPLIANT_BCP_RFC9700_TOKEN_STORAGE": True,
    "COMPLIANT_BCP_RFC9700_REFRESH_TOKEN": True,
    "COMPLIANT_BCP_RFC9700_REDIRECT_URI_MATCHING": True,
    "COMPLIANT_BCP_RFC9700_PKCE_REQUIRED": True,
    # http for loopback addresses only (a native client's local callback): lev.oauth.validators refuses any
    # other http redirect URI, so the toolkit's deploy warning about http (W008) is silenced below.
    "ALLOWED_REDIRECT_URI_SCHEMES": ["https", "http"],
    "OAUTH2_RESPONSE_TYPES_SUPPORTED": ["code"],
    "OAUTH2_GRANT_TYPES_SUPPORTED": ["authorization_code", "refresh_token"],
    "OAUTH2_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED": ["none", "client_secret_basic", "client_secret_post"],
    "OIDC_ISS_ENDPOINT": LEV_PUBLIC_URL,
    # Dynamic Client Registration (RFC 7591): open, rate-limited and bounded by lev.oauth.views.
    "DCR_ENABLED": True,
    "DCR_REGISTRATION_PERMISSION_CLASSES": ("oauth2_provider.dcr.AllowAllDCRPermission",),
    # Client ID Metadata Documents: fetched hardened against SSRF (lev.oauth.cimd).
    "CIMD_ENABLED": True,
    "CIMD_METADATA_FETCHER": "lev.oauth.cimd.LevMetadataFetcher",
    "CIMD_FETCH_TIMEOUT_SECONDS": env_int("LEV_OAUTH_CIMD_TIMEOUT_SECONDS", 5),
    "CIMD_MAX_DOCUMENT_SIZE": limits.OAUTH_REGISTRATION_BODY_MAX_BYTES,
}

SILENCED_SYSTEM_CHECKS = ["oauth2_provider.W008"]
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # The lender index's INCLUDE columns (lenders.LenderProgram) make PostgreSQL's ranking an index-only
    # scan; SQLite ignores them, which is all models.W040 says. The embedded default runs without them.
    SILENCED_SYSTEM_CHECKS.append("models.W040")
# The toolkit's models are swappable; named here because oauth.OAuthAuthorization refers to two of them.
OAUTH2_PROVIDER_APPLICATION_MODEL = "oauth2_provider.Application"
OAUTH2_PROVIDER_GRANT_MODEL = "oauth2_provider.Grant"

# --- MCP endpoint ---------------------------------------------------------------------------
DJANGO_MCP_GLOBAL_SERVER_CONFIG = {"name": "lev", "stateless": True}
DJANGO_MCP_GET_SERVER_INSTRUCTIONS_TOOL = False
# Backend the MCP tools call: empty = in-process dispatch to the REST views.
LEV_API_BASE_URL = env_str("LEV_API_BASE_URL", "")
LEV_API_TIMEOUT_SECONDS = env_float("LEV_API_TIMEOUT_SECONDS", 10.0)
LEV_MCP_MAX_BODY_BYTES = env_int("LEV_MCP_MAX_BODY_BYTES", 1_000_000)
# /mcp served without the pages' middleware (sessions, CSRF, authentication, messages, axes, WhiteNoise):
# lev.wsgi routes it to lev.handlers.EndpointHandler, which runs what /mcp relies on
# (mcp_tools.urls.ENDPOINT_MIDDLEWARE).
# Off: /mcp goes through settings.MIDDLEWARE like every page (the A/B of docs/benchmarks.md, issue 24).
LEV_MCP_LEAN_MIDDLEWARE = env_bool("LEV_MCP_LEAN_MIDDLEWARE", True)
# Under the ASGI server (production), a request's whole body must arrive within this many seconds of its
# headers, else 408 (lev.asgi.BodyGuard): a client trickling a body cannot hold a connection for long.
LEV_REQUEST_BODY_TIMEOUT_SECONDS = env_float("LEV_REQUEST_BODY_TIMEOUT_SECONDS", 30.0)
# ... and a connection's first request headers within this many seconds of its opening, else it is
# closed (lev.adapters.gunicorn.ASGIWorker; later requests on a kept-alive connection: gunicorn's keepalive, 5 s).
LEV_REQUEST_HEADER_TIMEOUT_SECONDS = env_float("LEV_REQUEST_HEADER_TIMEOUT_SECONDS", 20.0)
# Origins allowed to call /mcp from a browser; requests without Origin are always allowed.
LEV_MCP_ALLOWED_ORIGINS = env_list("LEV_MCP_ALLOWED_ORIGINS", [])
# Byte budget of one tool answer, counted as the client receives it: the `result` of the JSON-RPC response
# to tools/call in UTF-8 bytes, text content and structuredContent together (mcp_tools.budget). Tools trim
# detail and shorten pages to fit; an answer still over it is an INTERNAL_ERROR result, never cut JSON.
LEV_MCP_MAX_RESPONSE_BYTES = env_int("LEV_MCP_MAX_RESPONSE_BYTES", 60_000)
# Where `seed_demo --print-credentials` (make run) keeps the demo API key, so it is the same on every
# run: a local file (mode 0600, gitignored, not in the image), never the repository.
LEV_DEMO_KEY_FILE = env_str("LEV_DEMO_KEY_FILE", str(BASE_DIR / ".demo-api-key"))

# --- Resilience (numbers from Lev's published behaviour) ------------------------------------
LEV_RETRY_TOTAL = env_int("LEV_RETRY_TOTAL", 2)
LEV_RETRY_BACKOFF_BASE_MS = env_int("LEV_RETRY_BACKOFF_BASE_MS", 200)
LEV_RETRY_BACKOFF_FACTOR = env_float("LEV_RETRY_BACKOFF_FACTOR", 2.0)
LEV_RETRY_JITTER = env_float("LEV_RETRY_JITTER", 0.25)
LEV_RETRY_MAX_RETRY_AFTER_MS = env_int("LEV_RETRY_MAX_RETRY_AFTER_MS", 2000)
LEV_RETRY_BUDGET_MS = env_int("LEV_RETRY_BUDGET_MS", 15_000)
LEV_BREAKER_FAIL_MAX = env_int("LEV_BREAKER_FAIL_MAX", 5)
LEV_BREAKER_RESET_TIMEOUT_S = env_float("LEV_BREAKER_RESET_TIMEOUT_S", 30.0)
LEV_BREAKER_NAME = env_str("LEV_BREAKER_NAME", "lev_api")
# After a success has reset the shared breaker (one Redis round trip), this process's successes skip
# Redis for this long; failures always count in Redis at once (mcp_tools.resilience).
LEV_BREAKER_SYNC_SECONDS = env_float("LEV_BREAKER_SYNC_SECONDS", 1.0)
LEV_RATE_LIMIT_READS = env_str("LEV_RATE_LIMIT_READS", limits.RATE_LIMIT_READS_DEFAULT)
# 120 writes a minute per user, sized from a measured agent run: setting up one whole $24M deal through
# MCP (companies and people, three properties, figures, lender contacts, a search, five placements, three
# quotes, the winner, notes) makes 33 writes in 35 tool calls, all in one minute at a test's pace (the
# peak); 120 leaves room for three such deals a minute, where 30 throttled the one (issue 39). A runaway
# loop is still refused after 120. Measured and guarded by tests/mcp_tools/test_write_limits.py (lev/limits.py, README).
LEV_RATE_LIMIT_WRITES = env_str("LEV_RATE_LIMIT_WRITES", limits.RATE_LIMIT_WRITES_DEFAULT)
# Each process leases batches of a user's window from the shared count in Redis and spends them
# locally, so only one request a batch waits on Redis (lev.throttling: the design and its tolerance).
# Off (0): every request is counted in Redis, one round trip each (the long way).
LEV_RATE_LIMIT_LEASE = env_bool("LEV_RATE_LIMIT_LEASE", True)
LEV_IDEMPOTENCY_TTL_HOURS = env_int("LEV_IDEMPOTENCY_TTL_HOURS", 24)
# /metrics (Prometheus): scrapes send `Authorization: Bearer <token>`. Without a token it is open in
# development and off in production.
LEV_METRICS_TOKEN = env_str("LEV_METRICS_TOKEN", "")
# prometheus_client's multiprocess mode (several gunicorn or prefork processes) writes to this
# directory from the first metric a module defines, before any server hook runs: make sure it exists.
# prometheus_client reads the variable itself too; lev.metrics reads this setting.
PROMETHEUS_MULTIPROC_DIR = env_str("PROMETHEUS_MULTIPROC_DIR", "")
if PROMETHEUS_MULTIPROC_DIR:
    Path(PROMETHEUS_MULTIPROC_DIR).mkdir(parents=True, exist_ok=True)
# A Celery worker serves its own metrics on this port when set (0 = off), for Prometheus to scrape.
LEV_WORKER_METRICS_PORT = env_int("LEV_WORKER_METRICS_PORT", 0)
LEV_WORKER_METRICS_ADDR = env_str("LEV_WORKER_METRICS_ADDR", "0.0.0.0")
# Retry-After of the API's 503 when its own database or Redis is down.
LEV_OUTAGE_RETRY_AFTER_SECONDS = env_int("LEV_OUTAGE_RETRY_AFTER_SECONDS", 2)

# --- Celery ---------------------------------------------------------------------------------
# With REDIS_URL set, Redis is the broker; otherwise jobs run in-process (eager), so the
# embedded demo works with no services.
# (The in-process broker names a host, as kombu wants one: "memory://" alone logs a warning.)
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", REDIS_URL or "memory://localhost/")
CELERY_RESULT_BACKEND = None
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", not (REDIS_URL or env_str("CELERY_BROKER_URL", "")))
CELERY_TASK_EAGER_PROPAGATES = False
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# No task may run longer than the broker's visibility timeout, or Redis would hand a running job
# to a second worker (tests/deals/searches/test_worker_death.py checks every task against it).
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 110)
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 100)
CELERY_TASK_IGNORE_RESULT = True
# A job whose worker was SIGKILLed stays unacknowledged in Redis until this timeout, then comes
# back. The stale-search sweep has re-run the search long before (LEV_SEARCH_STALE_SECONDS), so the
# returning message finds it finished and does nothing; two minutes, not the ten it used to be, so
# it does not surface as a surprise much later.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 120),
    # Queuing a job happens inside an API request: a frozen broker may cost it a bounded wait, not
    # a hang (the search then stays pending, "not queued", and the sweep queues it later).
    "socket_timeout": 2.0,
    "socket_connect_timeout": 2.0,
}
CELERY_BROKER_CONNECTION_TIMEOUT = 2.0
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.2,
                                    "interval_max": 0.2}
# How often beat runs the stale-search sweep: with LEV_SEARCH_STALE_SECONDS, a search whose worker
# died is running again within stale + sweep seconds (20 + 5 by default).
LEV_SEARCH_SWEEP_SECONDS = env_float("LEV_SEARCH_SWEEP_SECONDS", 5.0)
# --- History imports' jobs (deals.history.jobs) -------------------------------------------------------
# History import jobs (deals.history.jobs; docs/import-export.md "The REST door"). An upload to
# POST /api/v1/history-imports/ and the admin's "Import history" upload may carry this many bytes (the only
# paths above DATA_UPLOAD_MAX_MEMORY_SIZE: lev.wsgi.body_limit); a bigger one is answered 413 before its body
# is read.
LEV_HISTORY_UPLOAD_MAX_BYTES = env_int("LEV_HISTORY_UPLOAD_MAX_BYTES", 64 * 1024 * 1024)
# A running import beats its heartbeat this often; one silent for LEV_HISTORY_STALE_SECONDS is re-queued
# by the sweep (every LEV_HISTORY_SWEEP_SECONDS), or failed after LEV_HISTORY_MAX_ATTEMPTS runs.
LEV_HISTORY_HEARTBEAT_SECONDS = env_float("LEV_HISTORY_HEARTBEAT_SECONDS", 3.0)
LEV_HISTORY_STALE_SECONDS = env_int("LEV_HISTORY_STALE_SECONDS", 15)
LEV_HISTORY_SWEEP_SECONDS = env_float("LEV_HISTORY_SWEEP_SECONDS", 5.0)
LEV_HISTORY_MAX_ATTEMPTS = env_int("LEV_HISTORY_MAX_ATTEMPTS", 3)
LEV_HISTORY_PENDING_GIVE_UP_SECONDS = env_int("LEV_HISTORY_PENDING_GIVE_UP_SECONDS", 3600)
# A job that finds another import of its account running waits this long, queued, before it tries again.
LEV_HISTORY_BUSY_RETRY_SECONDS = env_float("LEV_HISTORY_BUSY_RETRY_SECONDS", 5.0)
# An import's time limits: below the broker's visibility timeout (CELERY_VISIBILITY_TIMEOUT), like every task.
LEV_HISTORY_SOFT_TIME_LIMIT = env_int("LEV_HISTORY_SOFT_TIME_LIMIT", 100)
LEV_HISTORY_TIME_LIMIT = env_int("LEV_HISTORY_TIME_LIMIT", 110)
# The stored file of a finished job (a preview's, kept for its apply; a refused one's) is deleted after this.
LEV_HISTORY_FILE_RETENTION_SECONDS = env_int("LEV_HISTORY_FILE_RETENTION_SECONDS", 7 * 24 * 3600)
# --- Mail and outreach (deals.outreach, docs/outreach.md) -----------------------------------------------
# Django's email framework, configured from the environment. With no EMAIL_HOST (the embedded default,
# `make run`, tests) the backend is lev.mail.OutboxOnlyBackend: the mail goes nowhere but the outbox, which is the
# OutboundEmail rows the admin shows; with EMAIL_HOST it is SMTP (Mailpit in compose, a relay in production).
EMAIL_HOST = env_str("EMAIL_HOST", "")
EMAIL_PORT = env_int("EMAIL_PORT", 25)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", False)
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT", 10)
EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.smtp.EmailBackend" if EMAIL_HOST
                        else "lev.mail.OutboxOnlyBackend")
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "Lev <deals@lev.localhost>")
# The links in the emails (the deal package) are built on this address: the site as lenders reach it.
LEV_PUBLIC_BASE_URL = env_str("LEV_PUBLIC_BASE_URL", "http://127.0.0.1:8000").strip().rstrip("/")
# Replies go to reply+<tag>@LEV_REPLY_DOMAIN (the tag names the placement; docs/outreach.md).
LEV_REPLY_DOMAIN = env_str("LEV_REPLY_DOMAIN", "reply.lev.localhost")
# An email that failed for a passing reason (server down, 4xx) is tried again after
# LEV_OUTREACH_RETRY_BASE_SECONDS * 2**(attempts-1), at most LEV_OUTREACH_MAX_ATTEMPTS times in all.
LEV_OUTREACH_MAX_ATTEMPTS = env_int("LEV_OUTREACH_MAX_ATTEMPTS", 5)
LEV_OUTREACH_RETRY_BASE_SECONDS = env_float("LEV_OUTREACH_RETRY_BASE_SECONDS", 60.0)
# An email left `sending` this long (its worker died mid-send) is never sent again blindly: it is refused
# with "delivery uncertain" for the team to check and resend (docs/outreach.md, "What is retried").
LEV_OUTREACH_STALE_SECONDS = env_int("LEV_OUTREACH_STALE_SECONDS", 300)
LEV_OUTREACH_SWEEP_SECONDS = env_float("LEV_OUTREACH_SWEEP_SECONDS", 30.0)
# A placement is not sent a second follow-up within this many hours of the last (a repeated click).
LEV_OUTREACH_FOLLOW_UP_GAP_HOURS = env_int("LEV_OUTREACH_FOLLOW_UP_GAP_HOURS", 72)
# The deal package's public pages: requests per client address per minute.
LEV_PACKAGE_RATE_LIMIT = env_str("LEV_PACKAGE_RATE_LIMIT", "60/min")
LEV_PACKAGE_EXPIRES_DAYS = env_int("LEV_PACKAGE_EXPIRES_DAYS", 30)
# --- Inbound replies (deals.outreach.inbound, deals.outreach.imap; docs/outreach.md) -------------------
# The shared secret an inbound relay signs each reply with (POST /api/v1/inbound-email/: X-Lev-Timestamp and
# X-Lev-Signature: sha256=<HMAC-SHA256 of "<timestamp>.<body>">). Unset: the endpoint answers 503 (not
# configured), so a relay keeps the mail queued and retries rather than dropping it.
LEV_INBOUND_EMAIL_SECRET = env_str("LEV_INBOUND_EMAIL_SECRET", "")
# The largest raw message accepted (413 past it, answered from Content-Length before the body is read).
LEV_INBOUND_EMAIL_MAX_BYTES = env_int("LEV_INBOUND_EMAIL_MAX_BYTES", 25 * 1024 * 1024)
# A signed request older than this (or more than LEV_INBOUND_EMAIL_SKEW_SECONDS ahead) is a replay: 401.
LEV_INBOUND_EMAIL_MAX_AGE_SECONDS = env_int("LEV_INBOUND_EMAIL_MAX_AGE_SECONDS", 300)
LEV_INBOUND_EMAIL_SKEW_SECONDS = env_int("LEV_INBOUND_EMAIL_SKEW_SECONDS", 30)
# A site-level mailbox polled by beat every LEV_INBOUND_IMAP_POLL_SECONDS when LEV_INBOUND_IMAP_HOST is set:
# each unseen message goes through the same function as the endpoint, flagged seen once it is kept.
LEV_INBOUND_IMAP_HOST = env_str("LEV_INBOUND_IMAP_HOST", "")
LEV_INBOUND_IMAP_PORT = env_int("LEV_INBOUND_IMAP_PORT", 993)
LEV_INBOUND_IMAP_SSL = env_bool("LEV_INBOUND_IMAP_SSL", True)
LEV_INBOUND_IMAP_USER = env_str("LEV_INBOUND_IMAP_USER", "")
LEV_INBOUND_IMAP_PASSWORD = env_str("LEV_INBOUND_IMAP_PASSWORD", "")
LEV_INBOUND_IMAP_FOLDER = env_str("LEV_INBOUND_IMAP_FOLDER", "INBOX")
LEV_INBOUND_IMAP_POLL_SECONDS = env_float("LEV_INBOUND_IMAP_POLL_SECONDS", 60.0)
LEV_INBOUND_IMAP_TIMEOUT_SECONDS = env_float("LEV_INBOUND_IMAP_TIMEOUT_SECONDS", 30.0)
# Messages read per poll (the rest wait for the next one).
LEV_INBOUND_IMAP_BATCH = env_int("LEV_INBOUND_IMAP_BATCH", 50)
# An account's own replies mailbox is on the internet: a host that resolves to a loopback, private or other
# non-public address is refused (the form says so; a poll skips it), so an account cannot make this site
# connect inside its own network. On for a site whose accounts' mail servers are on its private network.
LEV_ACCOUNT_MAILBOX_PRIVATE_HOSTS = env_bool("LEV_ACCOUNT_MAILBOX_PRIVATE_HOSTS", False)
# An account's own replies mailbox (deals.outreach.models.AccountMailbox) keeps its password encrypted with a
# key derived from SECRET_KEY and this salt (django-fernet-encrypted-fields). Changing SECRET_KEY: keep the
# old one in SECRET_KEY_FALLBACKS until the mailboxes are saved again, or their passwords cannot be read.
SALT_KEY = env_str("LEV_FIELD_ENCRYPTION_SALT", "lev-account-mailboxes")
# --- Beat: the periodic jobs --------------------------------------------------------------------------
CELERY_BEAT_SCHEDULE = {
    "sweep-stale-lender-searches": {"task": "lenders.tasks.sweep_stale_searches",
                                    "schedule": LEV_SEARCH_SWEEP_SECONDS},
    "sweep-history-imports": {"task": "deals.tasks.sweep_history_imports", "schedule": LEV_HISTORY_SWEEP_SECONDS},
    "deliver-due-outreach": {"task": "deals.tasks.deliver_due_outreach", "schedule": LEV_OUTREACH_SWEEP_SECONDS},
    "refresh-lender-activity": {"task": "lenders.tasks.refresh_lender_activity",
                                "schedule": env_float("LEV_ACTIVITY_REFRESH_SECONDS", 3600.0)},
    "refresh-lender-signals": {"task": "lenders.tasks.refresh_lender_signals",
                               "schedule": env_float("LEV_SIGNALS_REFRESH_SECONDS", 3600.0)},
    "purge-idempotency-records": {"task": "deals.tasks.purge_idempotency_records", "schedule": 3600.0},
    "purge-superseded-lender-matches": {"task": "lenders.tasks.purge_superseded_matches",
                                        "schedule": env_float("LEV_SEARCH_PURGE_SECONDS", 3600.0)},
}
# The replies mailboxes (docs/outreach.md): the site's when LEV_INBOUND_IMAP_HOST is set, and every account's
# own that is enabled (a poll with none configured reads nothing).
CELERY_BEAT_SCHEDULE["poll-inbound-mailbox"] = {"task": "deals.tasks.poll_inbound_mailbox",
                                                "schedule": LEV_INBOUND_IMAP_POLL_SECONDS}
# --- Lender signals and activity (deals.searches.ranking.evidence, deals.placements.activity) ---------
# The lender signals the ranking learns from (deals.searches.ranking.evidence, docs/ranking.md): refreshed by
# beat every LEV_SIGNALS_REFRESH_SECONDS, and this long after a new outcome (a quote, a decline, a placement
# marked no response), once however many outcomes arrive meanwhile. /health says `stale` once the last
# refresh is older than LEV_SIGNALS_STALE_SECONDS.
LEV_SIGNALS_REFRESH_SECONDS = env_float("LEV_SIGNALS_REFRESH_SECONDS", 3600.0)
LEV_SIGNALS_DEBOUNCE_SECONDS = env_int("LEV_SIGNALS_DEBOUNCE_SECONDS", 60)
LEV_SIGNALS_STALE_SECONDS = env_int("LEV_SIGNALS_STALE_SECONDS", 3 * 3600)
# The activity recompute (deals.placements.activity) reads every placement: its statement limit is the task's,
# not a web request's (inside the task's 100 s soft time limit).
LEV_ACTIVITY_STATEMENT_TIMEOUT_MS = env_int("LEV_ACTIVITY_STATEMENT_TIMEOUT_MS", 90_000)
# Memory for the recompute's sorts and hashes (PostgreSQL work_mem, for that transaction only): at 1M
# placements the median's sort spilled ~30 MB to disk with the default 4 MB.
LEV_ACTIVITY_WORK_MEM_MB = env_int("LEV_ACTIVITY_WORK_MEM_MB", 64)

# --- Logging: every line carries the request id of the request (or tool call) it belongs to --
LOG_LEVEL = env_str("LOG_LEVEL", "INFO")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {
        "request_id": {"()": "lev.request_id.RequestIdLogFilter"},
        "not_outage_responses": {"()": "lev.outages.OutageResponseFilter"},
    },
    "formatters": {
        "standard": {
            "format": "%(asctime)s %(levelname)s [%(request_id)s] %(name)s: %(message)s",
        }
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "standard",
            "filters": ["request_id"],
        }
    },
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        "django.request": {"level": "ERROR", "filters": ["not_outage_responses"]},
        "mcp": {"level": "WARNING"},
        "httpx": {"level": "WARNING"},
    },
}

# --- Production hardening --------------------------------------------------------------------
if PRODUCTION:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SECURE_REDIRECT_EXEMPT = [r"^health$"]
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31536000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", True)
    SECURE_CONTENT_TYPE_NOSNIFF = True
    CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])
    STORAGES = {
        "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
        "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
        "history_imports": _HISTORY_STORAGE,
        "deal_documents": _DOCUMENTS_STORAGE,
    }

# --- Lender discovery (deals.searches.ranking, deals.searches.tasks) ----------------------------------------
# Queue of the lender jobs; a separate name lets several deployments (or a test run) share Redis.
CELERY_TASK_DEFAULT_QUEUE = env_str("CELERY_TASK_DEFAULT_QUEUE", "celery")
# A search that failed this many runs (worker lost, timeouts) is marked failed, not re-queued.
LEV_SEARCH_MAX_ATTEMPTS = env_int("LEV_SEARCH_MAX_ATTEMPTS", 3)
# Per-job limits, well inside the global CELERY_TASK_* limits: a ranking takes about a second.
LEV_SEARCH_SOFT_TIME_LIMIT = env_int("LEV_SEARCH_SOFT_TIME_LIMIT", 60)
LEV_SEARCH_TIME_LIMIT = env_int("LEV_SEARCH_TIME_LIMIT", 90)
# Matches written per chunk; after the first chunk of a large result the search is `partial`.
LEV_SEARCH_WRITE_CHUNK = env_int("LEV_SEARCH_WRITE_CHUNK", 2000)
# A search stores its best LEV_RANKING_TOP_N lenders (what agents, the admin and placements read),
# ranked by score, and counts every eligible lender (`total_matches`): at 1M programs a broad deal
# has ~120k eligible lenders, and writing them all was most of a search's time.
LEV_RANKING_TOP_N = env_int("LEV_RANKING_TOP_N", 1000)
# Memory for the ranking statement's per-lender aggregates (PostgreSQL work_mem, for its transaction
# only): ~120k lenders at 1M programs need ~25 MB, which the default 4 MB spills to disk.
LEV_RANKING_WORK_MEM_MB = env_int("LEV_RANKING_WORK_MEM_MB", 64)
# The stored matches of a search nobody reads any more are deleted (deals.searches.tasks.
# purge_superseded_matches, every LEV_SEARCH_PURGE_SECONDS, and for its deal when a search
# completes): a completed search superseded by a newer completed search of the same deal, and a
# failed search, once both it and the newer search finished this long ago. The latest completed
# search of every deal is never purged (docs/lender-discovery.md, "Stored results").
LEV_SEARCH_MATCH_RETENTION_SECONDS = env_int("LEV_SEARCH_MATCH_RETENTION_SECONDS", 86400)
# Programs kept per match (best first); the match also records how many programs matched.
LEV_SEARCH_PROGRAMS_PER_MATCH = env_int("LEV_SEARCH_PROGRAMS_PER_MATCH", 3)
# How long agents are told to wait before polling a search that is still running.
LEV_SEARCH_POLL_AFTER_MS = env_int("LEV_SEARCH_POLL_AFTER_MS", 1000)
# A search still `pending` this long after it was queued has not been picked up by any worker:
# the agent is told so (results `queue_status: not_picked_up`) and /health counts it.
LEV_SEARCH_PENDING_WARN_SECONDS = env_int("LEV_SEARCH_PENDING_WARN_SECONDS", 30)
# A search of the same deal version created this recently (not failed, not stuck) is reused rather than started again.
LEV_SEARCH_REUSE_SECONDS = env_int("LEV_SEARCH_REUSE_SECONDS", 900)
# A running search heartbeats at every phase and chunk; its longest silent phase is one candidate
# query, bounded by LEV_DB_STATEMENT_TIMEOUT_MS (10 s). Twice that without a heartbeat means its
# worker died.
LEV_SEARCH_STALE_SECONDS = env_int("LEV_SEARCH_STALE_SECONDS", 20)
# A search that no worker has started after this long (no worker, or the broker down all along) is
# failed with UPSTREAM_UNAVAILABLE, so an agent polling it is not left waiting forever.
LEV_SEARCH_PENDING_GIVE_UP_SECONDS = env_int("LEV_SEARCH_PENDING_GIVE_UP_SECONDS", 600)

# --- /health -----------------------------------------------------------------------------------
# Every probe of /health (database, Redis) answers within this bound, even when one hangs.
LEV_HEALTH_TIMEOUT_SECONDS = env_float("LEV_HEALTH_TIMEOUT_SECONDS", 1.0)
# Workers write a heartbeat to Redis this often; /health says `worker: not_seen` once the last
# one is older than LEV_WORKER_STALE_SECONDS.
LEV_WORKER_HEARTBEAT_SECONDS = env_float("LEV_WORKER_HEARTBEAT_SECONDS", 10.0)
LEV_WORKER_STALE_SECONDS = env_float("LEV_WORKER_STALE_SECONDS", 30.0)
LEV_WORKER_HEARTBEAT_KEY_PREFIX = env_str("LEV_WORKER_HEARTBEAT_KEY_PREFIX", "lev:worker-heartbeat")
