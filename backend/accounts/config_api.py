"""Operators' configuration of users and providers, and the audit log, under /api/v1/config/.
Thin: the checks and the audit records are accounts.directory's."""
from datetime import UTC

import django_filters
from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth.validators import UnicodeUsernameValidator
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from backend.errors import NotFound
from backend.filtering import FilterSet

from . import directory, oidc, roles
from .models import AuditEvent, Provider, SignInRule
from .permissions import IsOperator


def names(**kwargs):
    """A list of names (users, providers, collection keys), bounded."""
    return serializers.ListField(child=serializers.CharField(max_length=150),
                                 max_length=directory.MAX_NAMES, required=False, **kwargs)

REASON = {"required": False, "allow_blank": True, "max_length": 2000, "write_only": True}


class ProviderConfigSerializer(serializers.Serializer):
    name = serializers.SlugField(max_length=64)
    title = serializers.CharField(max_length=200, allow_blank=True, required=False)
    contact_email = serializers.EmailField(allow_blank=True, required=False)
    members = names(help_text="Usernames")
    collections = names(help_text="Collection keys")
    staging_area = serializers.CharField(read_only=True, help_text="Its drop directory")
    created_at = serializers.DateTimeField(read_only=True)
    reason = serializers.CharField(**REASON)

    def to_representation(self, provider):
        return {"name": provider.name, **directory.provider_state(provider),
                "staging_area": directory.staging_area(provider),
                "created_at": provider.created_at.isoformat()}


class UserConfigSerializer(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    username = serializers.CharField(max_length=150, validators=[UnicodeUsernameValidator()])
    email = serializers.EmailField(allow_blank=True, required=False)
    role = serializers.ChoiceField(choices=roles.GROUP_ROLES)
    active = serializers.BooleanField(required=False)
    providers = names(help_text="Providers it delivers for")
    last_login = serializers.DateTimeField(read_only=True, allow_null=True)
    reason = serializers.CharField(**REASON)

    def to_representation(self, user):
        return {"id": user.pk, "username": user.username, **directory.user_state(user),
                "last_login": user.last_login.isoformat() if user.last_login else None}


class NewUserSerializer(UserConfigSerializer):
    initial_password = serializers.CharField(read_only=True,
                                             help_text="Shown once; the user changes it")


def _fields(form):
    return {k: v for k, v in form.validated_data.items() if k != "reason"}


class ProviderListView(APIView):
    permission_classes = [IsOperator]

    @extend_schema(responses=ProviderConfigSerializer(many=True))
    def get(self, request):
        found = Provider.objects.prefetch_related("members", "collections")
        return Response(ProviderConfigSerializer(found, many=True).data)

    @extend_schema(request=ProviderConfigSerializer, responses={201: ProviderConfigSerializer})
    def post(self, request):
        form = ProviderConfigSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        provider = directory.save_provider(request.user, None, _fields(form),
                                           reason=form.validated_data.get("reason", ""))
        return Response(ProviderConfigSerializer(provider).data, status=status.HTTP_201_CREATED)


class ProviderDetailView(APIView):
    permission_classes = [IsOperator]

    def _provider(self, name):
        found = Provider.objects.filter(name=name).first()
        if found is None:
            raise NotFound(f"There is no provider {name}.")
        return found

    @extend_schema(responses=ProviderConfigSerializer)
    def get(self, request, provider):
        return Response(ProviderConfigSerializer(self._provider(provider)).data)

    @extend_schema(request=ProviderConfigSerializer, responses=ProviderConfigSerializer)
    def patch(self, request, provider):
        provider = self._provider(provider)
        form = ProviderConfigSerializer(data=request.data, partial=True)
        form.is_valid(raise_exception=True)
        provider = directory.save_provider(request.user, provider, _fields(form),
                                           reason=form.validated_data.get("reason", ""))
        return Response(ProviderConfigSerializer(provider).data)


class UserListView(APIView):
    permission_classes = [IsOperator]

    @extend_schema(responses=UserConfigSerializer(many=True))
    def get(self, request):
        people = get_user_model().objects.order_by("username").prefetch_related(
            "groups", "providers")
        return Response(UserConfigSerializer(people, many=True).data)

    @extend_schema(request=UserConfigSerializer, responses={201: NewUserSerializer})
    def post(self, request):
        form = UserConfigSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        user, password = directory.add_user(
            request.user, data["username"], data["role"], email=data.get("email", ""),
            providers=data.get("providers", ()), active=data.get("active", True),
            reason=data.get("reason", ""))
        body = {**UserConfigSerializer(user).data, "initial_password": password}
        return Response(body, status=status.HTTP_201_CREATED)


class UserDetailView(APIView):
    permission_classes = [IsOperator]

    def _user(self, pk):
        found = get_user_model().objects.filter(pk=pk).first()
        if found is None:
            raise NotFound(f"There is no user {pk}.")
        return found

    @extend_schema(responses=UserConfigSerializer)
    def get(self, request, pk):
        return Response(UserConfigSerializer(self._user(pk)).data)

    @extend_schema(request=UserConfigSerializer, responses=UserConfigSerializer)
    def patch(self, request, pk):
        user = self._user(pk)
        form = UserConfigSerializer(data=request.data, partial=True)
        form.is_valid(raise_exception=True)
        values = _fields(form)
        if values.get("username", user.username) != user.username:
            raise serializers.ValidationError({"username": ["a user keeps its name"]})
        values.pop("username", None)
        user = directory.update_user(request.user, user, values,
                                     reason=form.validated_data.get("reason", ""))
        return Response(UserConfigSerializer(user).data)


class AuditEventSerializer(serializers.ModelSerializer):
    actor = serializers.CharField(source="actor_name")
    target_label = serializers.CharField()

    class Meta:
        model = AuditEvent
        fields = ["id", "at", "actor", "action", "target_type", "target_id", "target_label",
                  "reason", "detail"]


class UtcInstantField(django_filters.fields.IsoDateTimeField):
    """An ISO 8601 instant compared in UTC: PostgreSQL refuses offsets beyond +-15:59, which a
    date-time may carry (-23:07 answered 500)."""

    def clean(self, value):
        if value == "":  # `?until=` names no instant; left out, the parameter filters nothing
            raise forms.ValidationError("give an ISO 8601 instant, or leave the parameter out")
        value = super().clean(value)
        if value is None:
            return None
        try:
            return value.astimezone(UTC)
        except OverflowError as exc:
            raise forms.ValidationError("the instant is out of range") from exc


class UtcInstantFilter(django_filters.IsoDateTimeFilter):
    field_class = UtcInstantField


class AuditFilter(FilterSet):
    target_type = django_filters.CharFilter(max_length=40)
    target_id = django_filters.CharFilter(max_length=64)
    actor = django_filters.CharFilter(field_name="actor_name", max_length=150)
    action = django_filters.CharFilter(max_length=40)
    since = UtcInstantFilter(field_name="at", lookup_expr="gte")
    until = UtcInstantFilter(field_name="at", lookup_expr="lt")

    class Meta:
        model = AuditEvent
        fields = []


class AuditLogView(generics.ListAPIView):
    """Operators' changes, newest first, by target, actor, action and time."""

    permission_classes = [IsOperator]
    serializer_class = AuditEventSerializer
    filterset_class = AuditFilter
    queryset = AuditEvent.objects.all()
    ordering_fields = []


class SignInRuleSerializer(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    claim = serializers.CharField(max_length=100, default="groups",
                                  help_text="The claim of the ID or access token looked at")
    value = serializers.CharField(max_length=200, help_text="The value it must hold (or list)")
    role = serializers.ChoiceField(choices=roles.GROUP_ROLES)
    provider = serializers.SlugField(max_length=64, required=False, allow_null=True,
                                     help_text="A provider the user then delivers for")
    reason = serializers.CharField(**REASON)

    def to_representation(self, rule):
        return {"id": rule.pk, "claim": rule.claim, "value": rule.value, "role": rule.role,
                "provider": rule.provider.name if rule.provider else None}


class SignInRuleListView(APIView):
    """Rules for single sign-on: a user whose token's claim holds a value gets a role (the most
    capable one that matches; user when none does) and, optionally, a provider."""

    permission_classes = [IsOperator]

    @extend_schema(responses=SignInRuleSerializer(many=True))
    def get(self, request):
        found = SignInRule.objects.select_related("provider")
        return Response(SignInRuleSerializer(found, many=True).data)

    @extend_schema(request=SignInRuleSerializer, responses={201: SignInRuleSerializer})
    def post(self, request):
        form = SignInRuleSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        rule = oidc.add_rule(request.user, data["claim"], data["value"], data["role"],
                             data.get("provider"), reason=data.get("reason", ""))
        return Response(SignInRuleSerializer(rule).data, status=status.HTTP_201_CREATED)


class SignInRuleDetailView(APIView):
    permission_classes = [IsOperator]

    @extend_schema(request=None, responses={204: None})
    def delete(self, request, pk):
        oidc.remove_rule(request.user, pk)
        return Response(status=status.HTTP_204_NO_CONTENT)
