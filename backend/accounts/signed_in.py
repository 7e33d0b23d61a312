"""Who a browser request is, from the session's one query (accounts.sessions): Django's own
get_user runs unchanged (user id, backend, session hash, is_active), only the backend's
get_user takes the user the session read instead of reading it again."""
from contextvars import ContextVar

from django.contrib import auth
from django.contrib.auth import middleware
from django.contrib.auth.backends import ModelBackend
from django.utils.functional import SimpleLazyObject

# the session store of the request whose user Django's get_user is looking up
_SESSION = ContextVar("granary_session", default=None)


class SessionUserBackend(ModelBackend):
    """ModelBackend, whose get_user answers with the user the session's query read when that
    is the user asked for."""

    def get_user(self, user_id):
        user = getattr(_SESSION.get(), "signed_in", None)
        if user is None or user.pk != user_id:
            return super().get_user(user_id)
        return user if self.user_can_authenticate(user) else None


def _user(request):
    if not hasattr(request, "_cached_user"):
        token = _SESSION.set(request.session)
        try:
            request._cached_user = auth.get_user(request)
        finally:
            _SESSION.reset(token)
    return request._cached_user


class AuthenticationMiddleware(middleware.AuthenticationMiddleware):
    """Django's, with request.user found through SessionUserBackend's shortcut."""

    def process_request(self, request):
        super().process_request(request)
        request.user = SimpleLazyObject(lambda: _user(request))
