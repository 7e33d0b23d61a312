"""The one DRF authentication for tokens: `Authorization: Token <t>` or `Bearer <t>`, where
<t> is a personal API token (gra_...) or a JWT access token from the configured OpenID
provider. A personal token answers only within its scopes."""
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, get_authorization_header

from backend.errors import DomainError

from . import oidc, tokens
from . import scopes as scope_policy

KEYWORDS = (b"token", b"bearer")
MAX_TOKEN = 8192


class BearerAuthentication(BaseAuthentication):
    keyword = "Token"

    def authenticate_header(self, request):
        return self.keyword

    def authenticate(self, request):
        parts = get_authorization_header(request).split()
        if not parts or parts[0].lower() not in KEYWORDS:
            return None
        if len(parts) != 2:
            raise exceptions.AuthenticationFailed(
                "Invalid token header: give one token after the keyword.")
        if len(parts[1]) > MAX_TOKEN:
            raise exceptions.AuthenticationFailed("The token is too long.")
        try:
            token = parts[1].decode("ascii")
        except UnicodeError as exc:
            raise exceptions.AuthenticationFailed("A token is ASCII.") from exc
        if oidc.configured() and token.count(".") == 2 and not tokens.looks_personal(token):
            return self._provider(token)
        # a personal token: gra_..., or one of the 40-hex keys made before scopes existed
        return self._personal(request, token)

    def _personal(self, request, token):
        row = tokens.usable(token)
        if row is None:
            raise exceptions.AuthenticationFailed("Invalid token: unknown, expired or revoked.")
        needed = scope_policy.needed(request.method, request.path)
        if needed not in row.scopes:
            raise exceptions.PermissionDenied(
                f"This token's scopes ({', '.join(row.scopes)}) do not include {needed!r}.")
        return row.user, row

    def _provider(self, token):
        try:
            claims = oidc.verify_bearer(token)
            return oidc.user_for(claims, fresh=False), claims
        except oidc.InvalidToken as exc:
            raise exceptions.AuthenticationFailed(exc.detail) from exc
        except DomainError as exc:
            if exc.status == 403:
                raise exceptions.PermissionDenied(exc.detail) from exc
            unavailable = exceptions.APIException(exc.detail)
            unavailable.status_code = exc.status  # the provider did not answer: a 503
            raise unavailable from exc
