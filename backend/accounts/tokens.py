"""Personal API tokens: made, found by their hash, used, revoked. The token itself is returned
once, when made; the table keeps its SHA-256 and first characters."""
import hashlib
import secrets
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from backend.errors import DomainError, NotFound

from . import scopes as scope_policy
from .models import ApiToken

PREFIX = "gra_"
MAX_NAME = 100
MAX_DAYS = 3650
# last use is written at most this often per token: a script's every call need not write a row
LAST_USE_EVERY = timedelta(minutes=1)


def digest(token):
    return hashlib.sha256(token.encode()).hexdigest()


def looks_personal(token):
    return token.startswith(PREFIX)


def issue(user, name, scopes=scope_policy.ALL, *, days=None):
    """Make a token for `user`; return (ApiToken, the token, shown this once)."""
    name = (name or "").strip()
    if not name or len(name) > MAX_NAME:
        raise DomainError(f"Name the token (1 to {MAX_NAME} characters).", "name")
    try:
        scopes = scope_policy.normalise(scopes)
    except ValueError as exc:
        raise DomainError(str(exc), "scopes") from exc
    if not scopes:
        raise DomainError("Give the token at least one scope.", "scopes")
    if days is not None and not 0 < days <= MAX_DAYS:
        raise DomainError(f"A token lives 1 to {MAX_DAYS} days.", "days")
    token = PREFIX + secrets.token_urlsafe(32)
    expires = timezone.now() + timedelta(days=days) if days else None
    row = ApiToken.objects.create(user=user, name=name, scopes=scopes, key_hash=digest(token),
                                  prefix=token[:len(PREFIX) + 4], expires_at=expires)
    return row, token


def script_token(user):
    """The token POST /auth/token/ hands a script: every scope (the role still limits it),
    expiring after GRANARY_TOKEN_DAYS."""
    return issue(user, "script", days=settings.GRANARY_TOKEN_DAYS or None)


def usable(token):
    """The live ApiToken a token string names (user loaded), or None: unknown, revoked,
    expired, or its user deactivated."""
    row = (ApiToken.objects.select_related("user").filter(key_hash=digest(token))
           .filter(revoked_at__isnull=True).first())
    now = timezone.now()
    if row is None or (row.expires_at and row.expires_at <= now) or not row.user.is_active:
        return None
    if row.last_used_at is None or now - row.last_used_at > LAST_USE_EVERY:
        ApiToken.objects.filter(pk=row.pk).update(last_used_at=now)
        row.last_used_at = now
    return row


def tokens_of(user):
    return ApiToken.objects.filter(user=user)


@transaction.atomic
def revoke(user, pk):
    """Revoke one of `user`'s tokens (another's answers as a missing one); idempotent."""
    row = tokens_of(user).select_for_update().filter(pk=pk).first()
    if row is None:
        raise NotFound(f"You have no token {pk}.")
    if row.revoked_at is None:
        row.revoked_at = timezone.now()
        row.save(update_fields=["revoked_at"])
    return row
