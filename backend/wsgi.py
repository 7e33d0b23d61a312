"""WSGI entry point for gunicorn."""
import os

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

from backend.host import settle_started

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "backend.settings")
application = get_wsgi_application()
# Django imports the URLconf, and with it every view, serializer and service module, on the
# first request a process serves: 1.2-1.5 s here, paid by a user (and the requests of the
# worker's other threads behind it) after every restart and every max_requests recycle.
# Imported now, a worker boots slower but answers its first request as fast as any other.
URL_PATTERNS = get_resolver().url_patterns
# and what the process loaded is set aside from the garbage collector (host.settle_started)
settle_started()
