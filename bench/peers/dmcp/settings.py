"""A bare django-mcp-server (0.5.7, in Lev's own virtualenv) with one tool, get_deal: issue 24's last
peer. Only what the library needs: its app, DRF (its view is a DRF APIView), no authentication
(DJANGO_MCP_AUTHENTICATION_CLASSES unset), stateless (no Django session per MCP session), no middleware.
DATABASE_URL names the same database as Lev's (bench/peers/run.py sets it)."""

import os

import dj_database_url

SECRET_KEY = "peers-bench-only"  # no sessions, no signing: nothing uses it
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
USE_TZ = True
TIME_ZONE = "UTC"
INSTALLED_APPS = ["django.contrib.contenttypes", "django.contrib.auth", "rest_framework", "mcp_server",
                  "bench.peers.dmcp"]
MIDDLEWARE: list[str] = []
ROOT_URLCONF = "mcp_server.urls"
DATABASES = {"default": dj_database_url.parse(os.environ["DATABASE_URL"], conn_max_age=60)}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
SESSION_ENGINE = "django.contrib.sessions.backends.signed_cookies"  # never used: stateless
DJANGO_MCP_GLOBAL_SERVER_CONFIG = {"name": "peers-django-mcp-server", "stateless": True}
DJANGO_MCP_GET_SERVER_INSTRUCTIONS_TOOL = False
REST_FRAMEWORK = {"DEFAULT_AUTHENTICATION_CLASSES": [], "DEFAULT_PERMISSION_CLASSES": [],
                  "UNAUTHENTICATED_USER": None}
# Warnings only, as the other servers run: the SDK's INFO line per request ("Processing request of type
# CallToolRequest") would otherwise go to the console, which no deployment keeps. A root handler also stops
# the SDK's logging.basicConfig from installing its own.
LOGGING = {"version": 1, "disable_existing_loggers": False,
           "handlers": {"console": {"class": "logging.StreamHandler"}},
           "root": {"level": "WARNING", "handlers": ["console"]}, "loggers": {"mcp": {"level": "WARNING"}}}
