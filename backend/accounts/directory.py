"""Operators' changes to users and providers: roles, deactivation, who delivers for whom and
which collections a provider may deliver. Each change lands with its audit record (who, when,
what changed from what to what) in one transaction."""
import secrets
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction

from backend.errors import Conflict, DomainError

from . import audit, roles
from .models import Provider
from .services import create_user, ensure_role_groups

MAX_NAMES = 1000


def _collection_model():
    # the catalog sits above accounts: reached through the relation, never imported
    return Provider.collections.field.related_model


def users_named(usernames, field):
    names = list(dict.fromkeys(usernames))
    if len(names) > MAX_NAMES:
        raise DomainError(f"at most {MAX_NAMES} names", field)
    found = list(get_user_model().objects.filter(username__in=names))
    unknown = sorted(set(names) - {u.username for u in found})
    if unknown:
        raise DomainError(f"no such user: {', '.join(unknown)}", field)
    return found


def collections_keyed(keys):
    model = _collection_model()
    keys = list(dict.fromkeys(keys))
    if len(keys) > MAX_NAMES:
        raise DomainError(f"at most {MAX_NAMES} collections", "collections")
    found = []
    for key in keys:
        try:
            found.append(model.objects.get_by_key(key))
        except model.DoesNotExist as exc:
            raise DomainError(str(exc), "collections") from None
    return found


def providers_named(names):
    names = list(dict.fromkeys(names))
    found = list(Provider.objects.filter(name__in=names))
    unknown = sorted(set(names) - {p.name for p in found})
    if unknown:
        raise DomainError(f"no such provider: {', '.join(unknown)}", "providers")
    return found


def staging_area(provider):
    """Where the provider's drop directory is (ingest.services.staging names it the same)."""
    return str(Path(settings.STAGING_ROOT) / provider.name)


def provider_state(provider):
    return {
        "title": provider.title, "contact_email": provider.contact_email,
        "members": sorted(provider.members.values_list("username", flat=True)),
        "collections": sorted(c.key for c in provider.collections.all()),
    }


def _diff(before, after):
    return {k: [before.get(k), v] for k, v in after.items() if before.get(k) != v}


def save_provider(actor, provider, values, *, reason=""):
    """Create (provider=None) or change a provider; `values` may hold title, contact_email,
    members (usernames) and collections (keys). Its name is its staging area's: fixed."""
    creating = provider is None
    with transaction.atomic():
        if creating:
            name = values.get("name") or ""
            if Provider.objects.filter(name__iexact=name).exists():
                raise DomainError(f"there is already a provider {name}", "name")
            provider = Provider(name=name)
            before = {}
        else:
            provider = Provider.objects.select_for_update().get(pk=provider.pk)
            if values.get("name", provider.name) != provider.name:
                raise DomainError("a provider keeps its name: its staging area is named after "
                                  "it", "name")
            before = provider_state(provider)
        for field in ("title", "contact_email"):
            if field in values:
                setattr(provider, field, values[field])
        provider.full_clean()
        provider.save()
        if "members" in values:
            provider.members.set(users_named(values["members"], "members"))
        if "collections" in values:
            provider.collections.set(collections_keyed(values["collections"]))
        changes = _diff(before, provider_state(provider))
        if changes:
            audit.record(actor, "create" if creating else "update", "provider", provider.pk,
                         label=provider.name, reason=reason, detail={"changes": changes})
    return provider


def user_state(user):
    return {
        "email": user.email, "role": roles.primary_role(user), "active": user.is_active,
        "providers": sorted(user.providers.values_list("name", flat=True)),
    }


def _set_role(user, role):
    ensure_role_groups()
    user.groups.remove(*Group.objects.filter(name__in=roles.GROUP_ROLES))
    user.groups.add(Group.objects.get(name=role))
    user.is_staff = role == roles.OPERATOR
    user.__dict__.pop("_granary_roles", None)


def add_user(actor, username, role, *, email="", providers=(), active=True, reason=""):
    """A new user holding `role` (inactive if asked: an account made ready before its owner
    arrives); returns (user, its first password). Never an existing one: create_user would
    reset that one's password."""
    if role not in roles.GROUP_ROLES:
        raise DomainError(f"choose one of {', '.join(roles.GROUP_ROLES)}", "role")
    with transaction.atomic():
        if get_user_model().objects.filter(username__iexact=username).exists():
            raise DomainError(f"there is already a user {username}", "username")
        found = providers_named(providers)
        if role == roles.PROVIDER and not found:
            raise DomainError("a provider user delivers for at least one provider", "providers")
        user, password, _ = create_user(
            username, role, password=secrets.token_urlsafe(12), email=email,
            provider=found[0].name if role == roles.PROVIDER else None)
        user.providers.set(found)
        if not active:
            user.is_active = False
            user.save(update_fields=["is_active"])
        audit.record(actor, "create", "user", user.pk, label=username, reason=reason,
                     detail={"changes": _diff({}, user_state(user))})
    return user, password


def update_user(actor, user, values, *, reason=""):
    """Change a user's email, role, active flag or providers. Operators cannot demote or
    deactivate themselves: the last one would lock everyone out."""
    with transaction.atomic():
        user = get_user_model().objects.select_for_update().get(pk=user.pk)
        before = user_state(user)
        if user.pk == actor.pk and (values.get("role", roles.OPERATOR) != roles.OPERATOR
                                    or values.get("active", True) is False):
            raise Conflict("you cannot take the operator role or the login from yourself; "
                           "ask another operator")
        if "role" in values and values["role"] != before["role"]:
            if values["role"] not in roles.GROUP_ROLES:
                raise DomainError(f"choose one of {', '.join(roles.GROUP_ROLES)}", "role")
            _set_role(user, values["role"])
        if "active" in values:
            user.is_active = values["active"]
        if "email" in values:
            user.email = values["email"]
        user.save()
        if "providers" in values:
            user.providers.set(providers_named(values["providers"]))
        after = user_state(user)
        if after["role"] == roles.PROVIDER and not after["providers"]:
            raise DomainError("a provider user delivers for at least one provider", "providers")
        changes = _diff(before, after)
        if changes:
            audit.record(actor, "update", "user", user.pk, label=user.username, reason=reason,
                         detail={"changes": changes})
    return user
