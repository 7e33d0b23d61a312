"""Endpoints and their rules, as their owners manage them: a webhook's secret is shown once
(at creation and at each rotation), its URL must point where webhooks may go, and what a rule
asks for is checked before anything is saved."""
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Value
from django.db.models.functions import Concat
from django.utils import timezone

from backend import nudges
from backend.accounts import roles
from backend.catalog.models import Collection
from backend.errors import DomainError, Forbidden

from .. import addresses
from ..channels import webhook
from ..models import Delivery, Endpoint, Event, Rule
from .outbox import OPERATOR_TYPES, PROVIDER_PREFIXES, TYPES

MAX_ENDPOINTS = 20
MAX_RULES = 50


def check_rules(rules):
    """The rules as (type, collection_key, subject) triples, or a DomainError."""
    if not isinstance(rules, list) or len(rules) > MAX_RULES:
        raise DomainError(f"rules is a list of at most {MAX_RULES} rules", "rules")
    out = []
    for rule in rules:
        if not isinstance(rule, dict) or set(rule) - {"type", "collection_key", "subject"}:
            raise DomainError("a rule has a type and, optionally, collection_key and subject",
                              "rules")
        kind, key, subject = (rule.get("type"), rule.get("collection_key", ""),
                              rule.get("subject", ""))
        if not isinstance(kind, str) or not _known(kind):
            raise DomainError(f"unknown event type {str(kind)[:64]!r}: one of "
                              f"{', '.join(TYPES)}, '*' or a prefix such as 'granule.*'",
                              "rules")
        if not isinstance(key, str) or len(key) > 120 or not isinstance(subject, str) or (
                len(subject) > 200):
            raise DomainError("a rule's collection_key (at most 120 characters) and subject "
                              "(at most 200) are text", "rules")
        out.append((kind, key, subject))
    return out


def check_audience(user, rules):
    """Refuse what a rule could never bring its owner: operators' alerts to others, a
    collection that does not exist, a provider's ingest events of a collection not theirs."""
    if roles.is_operator(user):
        keys = {k for _, k, _ in rules if k}
        unknown = keys - set(_collections(keys))
        if unknown:
            raise DomainError(f"no collection {sorted(unknown)[0][:120]!r}", "rules")
        return
    for kind, _, _ in rules:
        if kind in OPERATOR_TYPES or (kind.endswith(".*") and all(
                t in OPERATOR_TYPES for t in TYPES if t.startswith(kind[:-1]))):
            raise Forbidden(f"only operators are told of {kind}")
    keys = {k for _, k, _ in rules if k}
    known = _collections(keys)
    if keys - set(known):
        raise DomainError(f"no collection {sorted(keys - set(known))[0][:120]!r}", "rules")
    mine = set(_collections(keys, provider_member=user))
    for kind, key, _ in rules:
        if key and key not in mine and _provider_scoped(kind):
            raise Forbidden(f"{kind} events of {key} go to its providers: you are not one")


def _provider_scoped(kind):
    """Whether every type the rule matches is a provider's (granule.*, ingest.*)."""
    matched = [t for t in TYPES if kind in (t, "*") or (
        kind.endswith(".*") and t.startswith(kind[:-1]))]
    return bool(matched) and all(t.startswith(PROVIDER_PREFIXES) for t in matched)


def _collections(keys, provider_member=None):
    """The keys among `keys` naming collections (of a provider `provider_member` is in)."""
    if not keys:
        return []
    rows = Collection.objects.annotate(k=Concat("short_name", Value("."), "version")).filter(
        k__in=keys)
    if provider_member is not None:
        rows = rows.filter(providers__members=provider_member)
    return list(rows.values_list("k", flat=True).distinct())


def choices(user):
    """What the caller's rules may ask for: the event types (operators' alerts marked) and
    the collections whose ingest events they may have (their providers' collections)."""
    operator = roles.is_operator(user)
    return {"types": [{"type": t, "description": d, "operators_only": t in OPERATOR_TYPES}
                      for t, d in TYPES.items() if t != "test"
                      if operator or t not in OPERATOR_TYPES],
            "collections": sorted(
                Collection.objects.filter(providers__members=user).annotate(
                    k=Concat("short_name", Value("."), "version"))
                .values_list("k", flat=True).distinct())}


def _known(kind):
    if kind == "*" or kind in TYPES:
        return True
    return kind.endswith(".*") and any(t.startswith(kind[:-1]) for t in TYPES)


def create(user, kind, url="", name="", rules=()):
    """A new endpoint; for a webhook, its secret (shown this once) is on the returned row."""
    rules = check_rules(list(rules))
    check_audience(user, rules)
    if kind not in Endpoint.Kind.values:
        raise DomainError(f"kind is one of {', '.join(Endpoint.Kind.values)}", "kind")
    if kind == Endpoint.Kind.AMQP and not roles.is_operator(user):
        raise Forbidden("only operators publish to the AMQP exchange")
    if kind == Endpoint.Kind.WEBHOOK:
        addresses.check_url(url)
    elif kind == Endpoint.Kind.AMQP:
        url = url or settings.GRANARY_EVENTS_EXCHANGE
    else:
        url = ""
    if Endpoint.objects.filter(user=user).count() >= MAX_ENDPOINTS:
        raise DomainError(f"at most {MAX_ENDPOINTS} endpoints each", status=409)
    with transaction.atomic():
        endpoint = Endpoint.objects.create(
            user=user, kind=kind, url=url, name=str(name)[:100],
            secret=webhook.new_secret() if kind == Endpoint.Kind.WEBHOOK else "")
        set_rules(endpoint, rules)
    return endpoint


def set_rules(endpoint, rules):
    rules = check_rules(list(rules)) if rules and not isinstance(rules[0], tuple) else rules
    Rule.objects.filter(endpoint=endpoint).delete()
    Rule.objects.bulk_create([Rule(endpoint=endpoint, type=t, collection_key=k, subject=s)
                              for t, k, s in rules])


def update(endpoint, *, url=None, name=None, enabled=None, rules=None):
    with transaction.atomic():
        if url is not None and endpoint.kind == Endpoint.Kind.WEBHOOK:
            endpoint.url = addresses.check_url(url)
        if name is not None:
            endpoint.name = str(name)[:100]
        if enabled is not None:
            endpoint.enabled = bool(enabled)
        endpoint.save(update_fields=["url", "name", "enabled"])
        if rules is not None:
            rules = check_rules(rules)
            check_audience(endpoint.user, rules)
            set_rules(endpoint, rules)
    return endpoint


def rotate(endpoint):
    """A new secret (shown this once); the old one still signs beside it for a while."""
    if endpoint.kind != Endpoint.Kind.WEBHOOK:
        raise DomainError("only a webhook has a secret to rotate")
    endpoint.previous_secret, endpoint.secret = endpoint.secret, webhook.new_secret()
    endpoint.previous_until = timezone.now() + timedelta(
        hours=settings.GRANARY_EVENTS_ROTATION_H)
    endpoint.save(update_fields=["secret", "previous_secret", "previous_until"])
    return endpoint


def send_test(endpoint):
    """A `test` event to this endpoint alone, through its lane like any other."""
    with transaction.atomic():
        event = Event.objects.create(
            type="test", source="/granary", subject=f"endpoints/{endpoint.pk}",
            time=timezone.now(), data={"endpoint": endpoint.pk}, user=endpoint.user,
            fanned_at=timezone.now())
        delivery = Delivery.objects.create(event=event, endpoint=endpoint,
                                           due_at=event.time)
        # its owner asks now: an open circuit waits no longer (the lane keeps its order)
        Endpoint.objects.filter(pk=endpoint.pk).update(retry_at=None)
        nudges.send_on_commit("backend.events.deliver", endpoint.pk)
    return delivery


def replay(deliveries):
    """Dead deliveries sent again from a fresh count; (how many, [(id, why not)])."""
    rows = list(deliveries)
    dead = [d.pk for d in rows if d.state == Delivery.State.DEAD]
    refused = [(d.pk, f"it is {d.state}, not dead") for d in rows
               if d.state != Delivery.State.DEAD]
    with transaction.atomic():
        Delivery.objects.filter(pk__in=dead).update(
            state=Delivery.State.PENDING, attempts=0, due_at=timezone.now())
        lanes = sorted({d.endpoint_id for d in rows if d.pk in dead})
        Endpoint.objects.filter(pk__in=lanes).update(retry_at=None)
        for lane in lanes:
            nudges.send_on_commit("backend.events.deliver", lane)
    return len(dead), refused
