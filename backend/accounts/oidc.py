"""The configured OpenID provider: its published keys, the bearer JWTs it issues, and the users
it signs in (matched by issuer and subject, never by e-mail; roles from operators' rules)."""
import re
from dataclasses import dataclass
from datetime import timedelta

import requests
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.utils import timezone
from joserfc import jws, jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet

from backend.errors import DomainError, Forbidden, NotFound

from . import audit, roles
from .models import ExternalIdentity, Provider, SignInRule

# asymmetric only: "none" and HS256 (which a verifier holding the public key could be tricked
# into checking with that key as the secret) are refused before any key is looked at
ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512")
TIMEOUT_S = 5
# a token naming a key we do not hold makes us fetch the keys again, at most this often
REFETCH_EVERY_S = 60
# a bearer user's roles are worked out again from its token at most this often
RULES_EVERY = timedelta(minutes=1)


class InvalidToken(DomainError):
    status = 401

    def __init__(self, detail):
        super().__init__(f"The bearer token was refused: {detail}.",
                         headers={"WWW-Authenticate": "Token"})


def conf():
    return settings.GRANARY_OIDC


def configured():
    c = conf()
    return bool(c["issuer"] and c["client_id"])


def _fetch_json(url):
    try:
        answer = requests.get(url, timeout=TIMEOUT_S)
        answer.raise_for_status()
        return answer.json()
    except (requests.RequestException, ValueError) as exc:
        raise DomainError(f"The OpenID provider did not answer ({exc.__class__.__name__}).",
                          status=503) from exc


def metadata():
    """The provider's discovery document, cached in this process."""
    key = f"oidc-meta:{conf()['issuer']}"
    found = cache.get(key)
    if found is None:
        found = _fetch_json(conf()["issuer"] + "/.well-known/openid-configuration")
        cache.set(key, found, conf()["keys_ttl_s"])
    return found


def _key_set(kid):
    """The provider's published keys, fetched again (rate-limited) when `kid` is not among
    them: providers rotate keys."""
    key = f"oidc-jwks:{conf()['issuer']}"
    found = cache.get(key)
    known = found is not None and any(k.get("kid") == kid for k in found.get("keys", []))
    if found is None or (not known and cache.add(f"{key}:refetch", 1, REFETCH_EVERY_S)):
        found = _fetch_json(metadata()["jwks_uri"])
        cache.set(key, found, conf()["keys_ttl_s"])
    return KeySet.import_key_set(found)


def verify_bearer(token):
    """The claims of a JWT the provider issued for Granary; InvalidToken otherwise."""
    c = conf()
    try:
        header = jws.extract_compact(token.encode()).protected
    except (JoseError, ValueError, UnicodeError) as exc:
        raise InvalidToken("it is not a signed JWT") from exc
    if header.get("alg") not in ALGORITHMS:
        raise InvalidToken(f"algorithm {str(header.get('alg'))[:20]!r} is not accepted")
    keys = _key_set(header.get("kid"))
    try:
        decoded = jwt.decode(token, keys, algorithms=list(ALGORITHMS))
        jwt.JWTClaimsRegistry(
            leeway=c["leeway_s"],
            iss={"essential": True, "value": c["issuer"]},
            aud={"essential": True, "value": c["audience"]},
            sub={"essential": True},
            exp={"essential": True},
        ).validate(decoded.claims)
    except (JoseError, ValueError) as exc:
        raise InvalidToken(getattr(exc, "description", None) or exc.__class__.__name__) from exc
    return decoded.claims


@dataclass
class Rule:
    claim: str
    value: str
    role: str
    provider: Provider | None


def _env_rules():
    """GRANARY_OIDC_ROLE_RULES: "VALUE=ROLE[:PROVIDER]", comma-separated, on the groups claim."""
    found = []
    for item in conf()["role_rules"].split(","):
        value, _, target = item.strip().partition("=")
        role, _, provider = target.partition(":")
        if value and role in roles.GROUP_ROLES:
            found.append(Rule(conf()["groups_claim"], value, role,
                              Provider.objects.filter(name=provider).first() if provider
                              else None))
    return found


def _holds(claim, value):
    if isinstance(claim, list):
        return value in [str(item) for item in claim]
    return claim is not None and str(claim) == value


def matching_rules(claims):
    rules = [Rule(r.claim, r.value, r.role, r.provider)
             for r in SignInRule.objects.select_related("provider")] + _env_rules()
    return [rule for rule in rules if _holds(claims.get(rule.claim), rule.value)]


def apply_rules(user, claims):
    """Give `user` the most capable role its claims earn (user when no rule matches), and the
    providers the matching rules name."""
    matched = matching_rules(claims)
    role = max((rule.role for rule in matched), default=roles.USER, key=roles.RANK.index)
    user.groups.remove(*Group.objects.filter(name__in=roles.GROUP_ROLES).exclude(name=role))
    user.groups.add(Group.objects.get_or_create(name=role)[0])
    user.is_staff = role == roles.OPERATOR
    user.save(update_fields=["is_staff"])
    for rule in matched:
        if rule.provider is not None:
            rule.provider.members.add(user)
    user.__dict__.pop("_granary_roles", None)


def _free_username(claims):
    User = get_user_model()
    wanted = claims.get("preferred_username") or claims.get("sub")
    base = re.sub(r"[^\w.@+-]", "-", str(wanted))[:140] or "user"
    name, n = base, 1
    while User.objects.filter(username=name).exists():
        n += 1
        name = f"{base}-{n}"
    return name


def _identity(issuer, subject, claims):
    found = ExternalIdentity.objects.select_related("user").filter(
        issuer=issuer, subject=subject).first()
    if found is not None:
        return found, False
    email = claims.get("email") if isinstance(claims.get("email"), str) else ""
    try:
        with transaction.atomic():
            user = get_user_model()(username=_free_username(claims), email=email[:254])
            user.set_unusable_password()
            user.save()
            return ExternalIdentity.objects.create(user=user, issuer=issuer,
                                                   subject=subject), True
    except IntegrityError:  # another request made it first
        return ExternalIdentity.objects.select_related("user").get(
            issuer=issuer, subject=subject), False


def user_for(claims, *, fresh=True):
    """The user `claims` (from an ID token or a bearer JWT) name, made on first sight; its
    roles follow the rules at each sign-in (`fresh`), and at most every minute for bearers."""
    subject = claims.get("sub")
    if not isinstance(subject, str) or not 0 < len(subject) <= 255:
        raise InvalidToken("it names no subject")
    identity, made = _identity(conf()["issuer"], subject, claims)
    user = identity.user
    if not user.is_active:
        raise Forbidden("This account is disabled; ask an operator.")
    now = timezone.now()
    if made or fresh or not identity.last_seen_at or now - identity.last_seen_at > RULES_EVERY:
        apply_rules(user, claims)
        identity.last_seen_at = now
        identity.save(update_fields=["last_seen_at"])
    return user


@transaction.atomic
def add_rule(actor, claim, value, role, provider=None, *, reason=""):
    """An operator's new sign-in rule, with its audit record."""
    if role not in roles.GROUP_ROLES:
        raise DomainError(f"choose one of {', '.join(roles.GROUP_ROLES)}", "role")
    found = None
    if provider:
        found = Provider.objects.filter(name=provider).first()
        if found is None:
            raise DomainError(f"There is no provider {provider}.", "provider")
    rule = SignInRule.objects.create(claim=claim, value=value, role=role, provider=found)
    audit.record(actor, "create", "sign-in-rule", rule.pk, label=str(rule), reason=reason,
                 detail={"claim": claim, "value": value, "role": role, "provider": provider})
    return rule


@transaction.atomic
def remove_rule(actor, pk, *, reason=""):
    rule = SignInRule.objects.filter(pk=pk).first()
    if rule is None:
        raise NotFound(f"There is no sign-in rule {pk}.")
    audit.record(actor, "delete", "sign-in-rule", rule.pk, label=str(rule), reason=reason)
    rule.delete()
