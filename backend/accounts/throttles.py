"""Throttles for the endpoints that take credentials (login, token)."""
from rest_framework.settings import api_settings
from rest_framework.throttling import ScopedRateThrottle


class CredentialThrottle(ScopedRateThrottle):
    """DRF's scoped throttle (per address, or per user once logged in), reading the scope's
    rate from REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"] when asked rather than when imported."""

    def get_rate(self):
        return api_settings.DEFAULT_THROTTLE_RATES[self.scope]
