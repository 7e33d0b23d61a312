"""Who am I, log in and out (session, for the web UI), and API tokens."""
from django.contrib.auth import authenticate, login, logout
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.authtoken.models import Token
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from .serializers import LoginSerializer, MeSerializer


class MeView(APIView):
    @extend_schema(responses=MeSerializer)
    def get(self, request):
        return Response(MeSerializer(request.user).data)


class LoginView(APIView):
    @extend_schema(request=LoginSerializer, responses=MeSerializer)
    def post(self, request):
        form = LoginSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        user = authenticate(request, **form.validated_data)
        if user is None:
            return Response({"detail": "Wrong user name or password."},
                            status=status.HTTP_400_BAD_REQUEST)
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

    @extend_schema(request=None, responses={200: TOKEN_SCHEMA})
    def post(self, request):
        token, _ = Token.objects.get_or_create(user=request.user)
        return Response({"token": token.key})
