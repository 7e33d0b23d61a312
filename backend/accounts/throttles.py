"""Throttles for the endpoints that take credentials (login, token), and the shared counter
every Granary throttle keeps."""
from django.core.cache import caches
from rest_framework.settings import api_settings
from rest_framework.throttling import ScopedRateThrottle


class SharedThrottle(ScopedRateThrottle):
    """DRF's scoped throttle (per address, or per user once logged in) counting in the
    "shared" cache, a database table: every web process and host counts against one limit.
    The scope's rate is read from REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"] when asked."""

    @property
    def cache(self):
        return caches["shared"]

    def get_rate(self):
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope) or None


class CredentialThrottle(SharedThrottle):
    def get_rate(self):
        return api_settings.DEFAULT_THROTTLE_RATES[self.scope]
