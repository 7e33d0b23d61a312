"""Who am I, log in and out (session, for the web UI), and API tokens."""
from django.contrib.auth import authenticate, login, logout
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, status
from rest_framework.authtoken.models import Token
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from .serializers import LoginSerializer, MeSerializer
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


TOKEN_SCHEMA = {"type": "object", "properties": {"token": {"type": "string"}}}


class TokenView(APIView):
    """The caller's API token, for scripts and provider clients."""

    permission_classes = [IsAuthenticated]
    throttle_classes = [CredentialThrottle]
    throttle_scope = "token"

    @extend_schema(request=None, responses={200: TOKEN_SCHEMA})
    def post(self, request):
        token, _ = Token.objects.get_or_create(user=request.user)
        return Response({"token": token.key})
