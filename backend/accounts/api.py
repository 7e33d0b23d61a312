"""Who am I, log in and out (session, for the web UI), and API tokens."""
from django.contrib.auth import authenticate, login, logout
from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from backend.errors import Forbidden

from . import oidc, tokens
from . import scopes as scope_policy
from .models import ApiToken
from .serializers import ApiTokenSerializer as TokenSerializer
from .serializers import (
    AuthMethodsSerializer,
    LoginSerializer,
    MeSerializer,
    NewApiTokenSerializer,
    TokenRequestSerializer,
)
from .throttles import CredentialThrottle


class MeView(APIView):
    @extend_schema(responses=MeSerializer)
    def get(self, request):
        return Response(MeSerializer(request.user).data)


class LoginView(APIView):
    """Start a session. Throttled (scope "login"): password guessing gets a 429."""

    throttle_classes = [CredentialThrottle]
    throttle_scope = "login"

    @extend_schema(request=LoginSerializer, responses=MeSerializer)
    def post(self, request):
        form = LoginSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        user = authenticate(request, **form.validated_data)
        if user is None:
            raise exceptions.AuthenticationFailed("Wrong user name or password.")
        login(request, user)
        return Response(MeSerializer(user).data)


class LogoutView(APIView):
    @extend_schema(request=None, responses={204: None})
    def post(self, request):
        logout(request)
        return Response(status=status.HTTP_204_NO_CONTENT)


def _may_manage_tokens(request):
    """A personal token short of some scope may not make or revoke tokens: the new one could
    hold the scopes it lacks."""
    held = getattr(request.auth, "scopes", None)
    if isinstance(request.auth, ApiToken) and set(held) != set(scope_policy.ALL):
        raise Forbidden("A token without every scope cannot make or revoke tokens; sign in, "
                        "or use a token with every scope.")


TOKEN_SCHEMA = {"type": "object", "properties": {"token": {"type": "string"}},
                "required": ["token"]}


class TokenView(APIView):
    """A new API token for a script or a provider's client: every scope, expiring after
    GRANARY_TOKEN_DAYS, shown this once (name, scope and revoke tokens under auth/tokens/)."""

    permission_classes = [IsAuthenticated]
    throttle_classes = [CredentialThrottle]
    throttle_scope = "token"

    @extend_schema(request=None, responses={200: TOKEN_SCHEMA})
    def post(self, request):
        _may_manage_tokens(request)
        _, token = tokens.script_token(request.user)
        return Response({"token": token})


class TokenListView(APIView):
    """The caller's personal API tokens (never the tokens themselves: only their first
    characters), and a new one, shown once."""

    permission_classes = [IsAuthenticated]
    throttle_classes = [CredentialThrottle]
    throttle_scope = "token"

    def get_throttles(self):
        return super().get_throttles() if self.request.method == "POST" else []

    @extend_schema(responses=TokenSerializer(many=True))
    def get(self, request):
        return Response(TokenSerializer(tokens.tokens_of(request.user), many=True).data)

    @extend_schema(request=TokenRequestSerializer, responses={201: NewApiTokenSerializer})
    def post(self, request):
        _may_manage_tokens(request)
        form = TokenRequestSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        row, token = tokens.issue(request.user, data["name"], data["scopes"],
                                  days=data.get("days"))
        body = {**TokenSerializer(row).data, "token": token}
        return Response(body, status=status.HTTP_201_CREATED)


class TokenDetailView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(request=None, responses={200: TokenSerializer})
    def delete(self, request, pk):
        """Revoke the token: it answers 401 from now on (the row stays, to show when)."""
        _may_manage_tokens(request)
        return Response(TokenSerializer(tokens.revoke(request.user, pk)).data)


class AuthMethodsView(APIView):
    """How one may sign in here: local accounts always, an OpenID provider when configured."""

    @extend_schema(responses=AuthMethodsSerializer)
    def get(self, request):
        sso = None
        if oidc.configured():
            sso = {"name": oidc.conf()["name"], "login_url": reverse("oidc-login")}
        return Response({"local": True, "oidc": sso})
