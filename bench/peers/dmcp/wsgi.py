"""WSGI entry of the django-mcp-server peer: `gunicorn bench.peers.dmcp.wsgi -w 2`."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.peers.dmcp.settings")
application = get_wsgi_application()
