"""Account operations: roles, users with tokens, providers."""
import secrets

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction
from rest_framework.authtoken.models import Token

from backend.errors import DomainError

from . import roles
from .models import Provider


def ensure_role_groups():
    """Create the role groups; idempotent."""
    for name in roles.GROUP_ROLES:
        Group.objects.get_or_create(name=name)


@transaction.atomic
def create_user(username, role, *, password=None, email="", provider=None, collections=()):
    """Create (or update) a user holding `role`; return (user, password, token key).

    A provider user is attached to `provider` (created if new), which may deliver `collections`.
    An operator is also made staff so the Django admin opens for them.
    """
    if role not in roles.GROUP_ROLES:
        raise DomainError(f"unknown role {role!r}; choose one of {', '.join(roles.GROUP_ROLES)}")
    if role == roles.PROVIDER and not provider:
        raise DomainError("a provider user needs --provider NAME")
    ensure_role_groups()
    User = get_user_model()
    user, _ = User.objects.get_or_create(username=username, defaults={"email": email})
    password = password or secrets.token_urlsafe(12)
    user.set_password(password)
    if email:
        user.email = email
    user.is_staff = role == roles.OPERATOR or user.is_staff
    user.save()
    user.groups.add(Group.objects.get(name=role))
    if provider:
        prov, _ = Provider.objects.get_or_create(name=provider, defaults={"title": provider})
        prov.members.add(user)
        if collections:
            prov.collections.add(*collections)
    token, _ = Token.objects.get_or_create(user=user)
    return user, password, token.key


def providers_of(user):
    if not user.is_authenticated:
        return Provider.objects.none()
    return Provider.objects.filter(members=user)
