from django.contrib.auth import get_user_model
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from . import roles
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
