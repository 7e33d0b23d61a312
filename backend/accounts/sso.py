"""Single sign-on through the configured OpenID provider (authorization code flow with PKCE,
by Authlib's Django client): /auth/oidc/login/ sends the browser there, /auth/oidc/callback/
takes it back, checks state, nonce and ID token, and starts a session. Plain Django views: they
answer browsers with redirects, and a short page (401) when sign-in fails."""
import logging
from functools import lru_cache
from html import escape

from authlib.common.errors import AuthlibBaseError
from authlib.integrations.django_client import OAuth
from django.conf import settings
from django.contrib.auth import login
from django.http import HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from joserfc.errors import JoseError

from backend.errors import DomainError

from . import oidc

log = logging.getLogger(__name__)
NEXT_KEY = "granary_oidc_next"


@lru_cache(maxsize=4)
def _client(issuer, client_id, client_secret, scopes):
    oauth = OAuth()
    return oauth.register(
        "granary", client_id=client_id, client_secret=client_secret,
        server_metadata_url=f"{issuer}/.well-known/openid-configuration",
        client_kwargs={"scope": scopes, "code_challenge_method": "S256", "timeout": oidc.TIMEOUT_S},
    )


def client():
    c = oidc.conf()
    return _client(c["issuer"], c["client_id"], c["client_secret"], c["scopes"])


def safe_next(request, wanted):
    """`wanted` when it is a path on this site, else "/": `next` never sends a browser
    elsewhere."""
    if wanted and url_has_allowed_host_and_scheme(wanted, allowed_hosts={request.get_host()},
                                                  require_https=request.is_secure()) \
            and wanted.startswith("/") and not wanted.startswith("//"):
        return wanted
    return "/"


def failure(reason, status=401):
    page = (f"<!doctype html><title>Sign-in failed</title><h1>Sign-in failed</h1>"
            f"<p>{escape(reason)}</p><p><a href=\"/login\">Back to sign-in</a></p>")
    return HttpResponse(page, status=status)


def _userinfo(token, subject):
    """The provider's userinfo (the groups some providers leave out of the ID token), when it
    speaks of the same subject."""
    try:
        found = client().userinfo(token=token)
    except (AuthlibBaseError, OSError, ValueError):
        return {}
    return dict(found) if found.get("sub") == subject else {}


@never_cache
@require_GET
def sign_in(request):
    if not oidc.configured():
        return failure("No OpenID provider is configured here.", status=404)
    request.session[NEXT_KEY] = safe_next(request, request.GET.get("next"))
    try:
        return client().authorize_redirect(request, request.build_absolute_uri(
            reverse("oidc-callback")))
    except (AuthlibBaseError, OSError, ValueError) as exc:
        log.warning("OpenID provider unreachable: %s", exc)
        return failure("The sign-in service did not answer; try again later.", status=503)


@never_cache
@require_GET
def callback(request):
    if not oidc.configured():
        return failure("No OpenID provider is configured here.", status=404)
    try:
        token = client().authorize_access_token(request)
    except (AuthlibBaseError, JoseError) as exc:
        log.info("OpenID sign-in refused: %r", exc)
        return failure(f"The answer from the sign-in service was not accepted "
                       f"({getattr(exc, 'error', None) or exc.__class__.__name__}).")
    except OSError as exc:
        log.warning("OpenID provider unreachable: %s", exc)
        return failure("The sign-in service did not answer; try again later.", status=503)
    claims = token.get("userinfo")
    if not claims or claims.get("iss") != oidc.conf()["issuer"]:
        return failure("The sign-in service sent no valid ID token.")
    claims = dict(claims)
    if oidc.conf()["groups_claim"] not in claims:
        claims = {**_userinfo(token, claims["sub"]), **claims}
    try:
        user = oidc.user_for(claims)
    except DomainError as exc:
        return failure(exc.detail, status=exc.status)
    login(request, user, backend=settings.AUTHENTICATION_BACKENDS[0])
    return HttpResponseRedirect(safe_next(request, request.session.pop(NEXT_KEY, "/")))
