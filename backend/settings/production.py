"""Production: PostgreSQL, RabbitMQ, HTTPS behind nginx. Refuses to start half-configured."""
import os

from django.core.exceptions import ImproperlyConfigured

from .above_archive import *  # noqa: F401,F403
from .base import *  # noqa: F401,F403
from .base import CELERY_BROKER_URL, DATABASES, REST_FRAMEWORK, SECRET_KEY

DEBUG = False

_problems = []
if not os.environ.get("DJANGO_SECRET_KEY") or len(SECRET_KEY) < 50 or len(set(SECRET_KEY)) < 5:
    _problems.append("DJANGO_SECRET_KEY must be set to a random string of 50 or more characters "
        "(python -c 'import secrets; print(secrets.token_urlsafe(50))')")
if DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
    _problems.append("DATABASE_URL must point at PostgreSQL (postgres://user:pass@host/db)")
if not CELERY_BROKER_URL.startswith(("amqp://", "amqps://", "pyamqp://")):
    _problems.append("CELERY_BROKER_URL must point at RabbitMQ (amqp://user:pass@host:5672/vhost)")
if not os.environ.get("DJANGO_ALLOWED_HOSTS"):
    _problems.append("DJANGO_ALLOWED_HOSTS must list the host names Granary is served under")
if _problems:
    raise ImproperlyConfigured("Granary production settings: " + "; ".join(_problems))

SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
REST_FRAMEWORK["NUM_PROXIES"] = int(os.environ.get("GRANARY_PROXIES", "1"))  # nginx
SECURE_SSL_REDIRECT = True
SECURE_HSTS_SECONDS = 31536000
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = False
EMAIL_BACKEND = os.environ.get("EMAIL_BACKEND", "django.core.mail.backends.smtp.EmailBackend")
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
