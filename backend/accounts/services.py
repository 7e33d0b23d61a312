"""Account operations: roles, users with tokens, providers."""
import secrets

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction

from backend.errors import DomainError, Forbidden

from . import roles, tokens
from .models import Provider


def ensure_role_groups():
    """Create the role groups; idempotent."""
    for name in roles.GROUP_ROLES:
        Group.objects.get_or_create(name=name)


@transaction.atomic
def create_user(username, role, *, password=None, email="", provider=None, collections=()):
    """Create (or update) a user holding `role`; return (user, password, a new API token).

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
    _, token = tokens.script_token(user)
    return user, password, token


def providers_of(user):
    if not user.is_authenticated:
        return Provider.objects.none()
    return Provider.objects.filter(members=user)


def acting_provider(user, name=None):
    """The provider a delivery acts for: the caller's only one, or the one it names.

    An operator may act for any provider but must name it; a provider's user may act only for
    the providers it belongs to.
    """
    if roles.is_operator(user):
        if not name:
            raise DomainError("Name the provider this is for.", "provider")
        found = Provider.objects.filter(name=name).first()
        if found is None:
            raise DomainError(f"There is no provider {name}.", "provider")
        return found
    mine = providers_of(user)
    if name:
        found = mine.filter(name=name).first()
        if found is None:
            raise Forbidden(f"You do not deliver for provider {name}.")
        return found
    candidates = list(mine[:2])
    if not candidates:
        raise Forbidden("Your account belongs to no provider; an operator can add it.")
    if len(candidates) > 1:
        raise DomainError("You deliver for several providers; name one.", "provider")
    return candidates[0]
