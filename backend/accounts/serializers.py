from django.contrib.auth import get_user_model
from django.utils import timezone
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from . import roles, scopes, tokens
from .models import ApiToken
from .roles import ALL_ROLES


class MeSerializer(serializers.ModelSerializer):
    role = serializers.SerializerMethodField()
    roles = serializers.SerializerMethodField()
    providers = serializers.SerializerMethodField()
    authenticated = serializers.SerializerMethodField()
    # an anonymous caller is answered too: no name (""), no email
    username = serializers.CharField(read_only=True)
    email = serializers.SerializerMethodField()

    class Meta:
        model = get_user_model()
        fields = ["authenticated", "username", "email", "role", "roles", "providers"]

    def get_email(self, user) -> str:
        return getattr(user, "email", "")

    @extend_schema_field(serializers.ChoiceField(choices=ALL_ROLES))
    def get_role(self, user):
        return roles.primary_role(user)

    @extend_schema_field(serializers.ListField(child=serializers.ChoiceField(
        choices=ALL_ROLES)))
    def get_roles(self, user):
        return sorted(roles.roles_of(user))

    def get_providers(self, user) -> list[str]:
        if not user.is_authenticated:
            return []
        return list(user.providers.values_list("name", flat=True))

    def get_authenticated(self, user) -> bool:
        return bool(user.is_authenticated)


class LoginSerializer(serializers.Serializer):
    username = serializers.CharField()
    password = serializers.CharField(style={"input_type": "password"})


class ApiTokenSerializer(serializers.ModelSerializer):
    prefix = serializers.CharField(read_only=True, help_text="The token's first characters")
    active = serializers.SerializerMethodField()
    scopes = serializers.ListField(child=serializers.ChoiceField(choices=scopes.ALL))

    class Meta:
        model = ApiToken
        fields = ["id", "name", "scopes", "prefix", "created_at", "expires_at", "revoked_at",
                  "last_used_at", "active"]

    def get_active(self, row) -> bool:
        return row.revoked_at is None and (row.expires_at is None
                                           or row.expires_at > timezone.now())


class NewApiTokenSerializer(ApiTokenSerializer):
    token = serializers.CharField(read_only=True, help_text="Shown this once; only its hash "
                                                            "is kept")

    class Meta(ApiTokenSerializer.Meta):
        fields = [*ApiTokenSerializer.Meta.fields, "token"]


class TokenRequestSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=tokens.MAX_NAME)
    scopes = serializers.ListField(child=serializers.ChoiceField(choices=scopes.ALL),
                                   min_length=1)
    days = serializers.IntegerField(min_value=1, max_value=tokens.MAX_DAYS, required=False,
                                    allow_null=True, help_text="Left out: never expires")

    def validate_scopes(self, value):
        if len(value) > 4 * len(scopes.ALL):
            raise serializers.ValidationError("Name each scope once.")
        return value


class SsoSerializer(serializers.Serializer):
    name = serializers.CharField(help_text="The provider's name, for the button")
    login_url = serializers.CharField()


class AuthMethodsSerializer(serializers.Serializer):
    local = serializers.BooleanField()
    oidc = SsoSerializer(allow_null=True)
