"""Who may do what: every route and method of the URL conf, asked once by each role, against
objects owned by the first user and the first provider, answers the status the table says.

The routes come from the URL resolver, not from a list kept here: a route (or a method of one)
added without a row in EXPECTED fails `test_every_route_has_expectations`. Each request runs
in a savepoint rolled back after it, so the objects are made once and every role meets them as
they were made (a DELETE by one role does not change what the next one sees).
"""
import json
from dataclasses import dataclass

import pytest
from django.core.cache import cache
from django.db import transaction
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from rest_framework.test import APIClient

from backend.accounts import roles, tokens
from backend.accounts.models import SignInRule
from backend.archive import services as archive
from backend.archive.models import ArchiveRequest, Bucket, Drive, Reconciliation, Volume
from backend.events import services as events
from backend.events.models import Endpoint
from console.models import BulkJob
from distribution.models import CartItem, Destination, Subscription
from distribution.services import orders, staging
from ingest.models import IngestRequest, Pdr
from tests.archive_fixtures import archived_collection, small_layout, staged_granule
from tests.factories import ProviderFactory, UserFactory

ROLES = ("anonymous", "user", "user2", "provider", "provider2", "operator")

# Not part of the API: Django's own admin site (its login pages guard it).
EXCLUDED_PREFIXES = ("admin/",)
# HEAD answers as GET does, OPTIONS describes the route: neither is a right of its own.
IMPLIED_METHODS = ("head", "options")
# Function views answer any method; the one each is used with.
FUNCTION_VIEW_METHODS = {"spa": ("GET",), "oidc-login": ("GET",), "oidc-callback": ("GET",)}
# Catch-all routes, asked at a path of their own.
FIXED_PATHS = {"spa": "/orders", "stac:unknown": "/stac/nowhere"}
# Where a call names the provider it acts for: the first provider's.
QUERIES = {"ingest-upload": "?provider=MODAPS",
           "completeness": "?collection=MOD021KM.061"}

# Anonymous callers get 401 wherever a login is needed; another's order, subscription or
# destination answers 404, as a missing one does; operators reach every order and subscription
# but only their own destinations and cart; a provider's user reaches its provider's ingest
# requests and PDRs only, and the second provider is refused when it names the first (403).
#                                                anon  user  user2 prov  prov2 oper
EXPECTED = {
    ('api-docs', 'GET'):                        (200, 200, 200, 200, 200, 200),
    ('api-root', 'GET'):                        (200, 200, 200, 200, 200, 200),
    ('archive-queues', 'GET'):                  (401, 403, 403, 403, 403, 200),
    ('archive-request-bulk', 'POST'):           (401, 403, 403, 403, 403, 200),
    ('archive-request-cancel', 'POST'):         (401, 403, 403, 403, 403, 409),
    ('archive-request-detail', 'GET'):          (401, 403, 403, 403, 403, 200),
    ('archive-request-list', 'GET'):            (401, 403, 403, 403, 403, 200),
    ('bucket-board', 'GET'):                    (401, 403, 403, 403, 403, 200),
    ('bucket-list', 'GET'):                     (401, 403, 403, 403, 403, 200),
    ('bulk-job-cancel', 'POST'):                (401, 403, 403, 403, 403, 200),
    ('bulk-job-detail', 'GET'):                 (401, 403, 403, 403, 403, 200),
    ('bulk-job-items', 'GET'):                  (401, 403, 403, 403, 403, 200),
    ('bulk-job-list', 'GET'):                   (401, 403, 403, 403, 403, 200),
    ('bulk-job-list', 'POST'):                  (401, 403, 403, 403, 403, 200),
    ('cache', 'GET'):                           (401, 403, 403, 403, 403, 200),
    ('cache-pin', 'POST'):                      (401, 403, 403, 403, 403, 200),
    ('cache-release', 'POST'):                  (401, 403, 403, 403, 403, 200),
    ('cart', 'DELETE'):                         (401, 200, 200, 200, 200, 200),
    ('cart', 'GET'):                            (401, 200, 200, 200, 200, 200),
    ('cart', 'POST'):                           (401, 200, 200, 200, 200, 200),
    ('cart-granule', 'DELETE'):                 (401, 200, 200, 200, 200, 200),
    ('cart-matching', 'POST'):                  (401, 200, 200, 200, 200, 200),
    # the subset estimate of one's own cart: alice has a granule in hers, the others' are empty
    ('cart-subset', 'POST'):                    (401, 200, 400, 400, 400, 400),
    ('console-granule-counts', 'GET'):          (401, 403, 403, 403, 403, 200),
    ('console-ingest-failures', 'GET'):         (401, 403, 403, 403, 403, 200),
    ('console-granule-delete', 'POST'):         (401, 403, 403, 403, 403, 200),
    ('console-granule-detail', 'GET'):          (401, 403, 403, 403, 403, 200),
    ('console-granule-list', 'GET'):            (401, 403, 403, 403, 403, 200),
    ('console-granule-restore', 'POST'):        (401, 403, 403, 403, 403, 409),
    ('console-granule-withdraw', 'POST'):       (401, 403, 403, 403, 403, 200),
    # an archived granule can still be archived: no redelivery to ask for
    ('console-granule-redeliver', 'POST'):      (401, 403, 403, 403, 403, 409),
    ('collection-detail', 'GET'):               (200, 200, 200, 200, 200, 200),
    ('collection-list', 'GET'):                 (200, 200, 200, 200, 200, 200),
    ('console-dead-letter', 'GET'):             (401, 403, 403, 403, 403, 200),
    ('console-dead-letter-replay', 'POST'):     (401, 403, 403, 403, 403, 202),
    ('console-failure-group-retry', 'POST'):    (401, 403, 403, 403, 403, 404),
    ('console-failure-group-redeliver', 'POST'): (401, 403, 403, 403, 403, 404),
    ('console-failure-groups', 'GET'):          (401, 403, 403, 403, 403, 200),
    ('demo-synthetic-history', 'GET'):          (401, 403, 403, 403, 403, 200),
    ('completeness', 'GET'):                    (401, 403, 403, 403, 403, 200),
    ('completeness-worst', 'GET'):              (401, 403, 403, 403, 403, 200),
    ('config-audit', 'GET'):                    (401, 403, 403, 403, 403, 200),
    ('config-collection-detail', 'GET'):        (401, 403, 403, 403, 403, 200),
    ('config-collection-detail', 'PATCH'):      (401, 403, 403, 403, 403, 200),
    ('config-collection-list', 'GET'):          (401, 403, 403, 403, 403, 200),
    ('config-collection-list', 'POST'):         (401, 403, 403, 403, 403, 201),
    ('config-provider-detail', 'GET'):          (401, 403, 403, 403, 403, 200),
    ('config-provider-detail', 'PATCH'):        (401, 403, 403, 403, 403, 200),
    ('config-provider-list', 'GET'):            (401, 403, 403, 403, 403, 200),
    ('config-provider-list', 'POST'):           (401, 403, 403, 403, 403, 201),
    ('config-user-detail', 'GET'):              (401, 403, 403, 403, 403, 200),
    ('config-user-detail', 'PATCH'):            (401, 403, 403, 403, 403, 200),
    ('config-user-list', 'GET'):                (401, 403, 403, 403, 403, 200),
    ('config-recall-shares', 'GET'):            (401, 403, 403, 403, 403, 200),
    ('config-recall-shares', 'PUT'):            (401, 403, 403, 403, 403, 400),
    ('config-sign-in-rule-list', 'GET'):        (401, 403, 403, 403, 403, 200),
    ('config-sign-in-rule-list', 'POST'):       (401, 403, 403, 403, 403, 201),
    ('config-sign-in-rule-detail', 'DELETE'):   (401, 403, 403, 403, 403, 204),
    ('config-user-list', 'POST'):               (401, 403, 403, 403, 403, 201),
    ('destination-detail', 'DELETE'):           (401, 204, 404, 404, 404, 404),
    ('destination-detail', 'GET'):              (401, 200, 404, 404, 404, 404),
    ('destination-detail', 'PATCH'):            (401, 200, 404, 404, 404, 404),
    ('destination-detail', 'PUT'):              (401, 200, 404, 404, 404, 404),
    ('destination-list', 'GET'):                (401, 200, 200, 200, 200, 200),
    ('destination-list', 'POST'):               (401, 201, 201, 201, 201, 201),
    ('destination-sftp-key', 'GET'):            (401, 200, 200, 200, 200, 200),
    ('event-detail', 'GET'):                    (401, 200, 404, 404, 404, 200),
    ('event-list', 'GET'):                      (401, 200, 200, 200, 200, 200),
    # endpoints are their owner's alone: operators see every event, not others' endpoints
    ('event-endpoint-choices', 'GET'):          (401, 200, 200, 200, 200, 200),
    ('event-endpoint-deliveries', 'GET'):       (401, 200, 404, 404, 404, 404),
    ('event-endpoint-detail', 'DELETE'):        (401, 204, 404, 404, 404, 404),
    ('event-endpoint-detail', 'GET'):           (401, 200, 404, 404, 404, 404),
    ('event-endpoint-detail', 'PATCH'):         (401, 200, 404, 404, 404, 404),
    ('event-endpoint-list', 'GET'):             (401, 200, 200, 200, 200, 200),
    ('event-endpoint-list', 'POST'):            (401, 201, 201, 201, 201, 201),
    ('event-endpoint-replay', 'POST'):          (401, 200, 404, 404, 404, 404),
    ('event-endpoint-rotate', 'POST'):          (401, 200, 404, 404, 404, 404),
    ('event-endpoint-test', 'POST'):            (401, 202, 404, 404, 404, 404),
    ('drive-detail', 'GET'):                    (401, 403, 403, 403, 403, 200),
    ('drive-list', 'GET'):                      (401, 403, 403, 403, 403, 200),
    ('drive-vary', 'POST'):                     (401, 403, 403, 403, 403, 200),
    ('file-download', 'GET'):                   (401, 200, 200, 200, 200, 200),
    ('file-status', 'GET'):                     (401, 403, 403, 403, 403, 200),
    ('granary-get', 'GET'):                     (200, 200, 200, 200, 200, 200),  # no secret in it
    ('granule-detail', 'GET'):                  (200, 200, 200, 200, 200, 200),
    ('granule-facets', 'GET'):                  (200, 200, 200, 200, 200, 200),
    ('granule-facets', 'POST'):                 (200, 200, 200, 200, 200, 200),
    ('granule-list', 'GET'):                    (200, 200, 200, 200, 200, 200),
    ('granule-search', 'POST'):                 (200, 200, 200, 200, 200, 200),
    ('granule-timeline', 'GET'):                (200, 200, 200, 200, 200, 200),
    ('granule-timeline', 'POST'):               (200, 200, 200, 200, 200, 200),
    ('health', 'GET'):                          (200, 200, 200, 200, 200, 200),
    ('ingest-pdr-detail', 'GET'):               (401, 403, 403, 200, 404, 200),
    ('ingest-pdr-list', 'GET'):                 (401, 403, 403, 200, 200, 200),
    ('ingest-pdr-list', 'POST'):                (401, 403, 403, 400, 403, 400),
    ('ingest-request-detail', 'GET'):           (401, 403, 403, 200, 404, 200),
    ('ingest-request-list', 'GET'):             (401, 403, 403, 200, 200, 200),
    ('ingest-request-list', 'POST'):            (401, 403, 403, 400, 403, 400),
    ('ingest-request-retry', 'POST'):           (401, 403, 403, 202, 404, 202),
    ('ingest-upload', 'PUT'):                   (401, 403, 403, 201, 403, 201),
    ('login', 'POST'):                          (200, 200, 200, 200, 200, 200),
    ('logout', 'POST'):                         (204, 204, 204, 204, 204, 204),
    ('me', 'GET'):                              (200, 200, 200, 200, 200, 200),
    ('metrics-daily', 'GET'):                   (401, 403, 403, 403, 403, 200),
    ('metrics-targets', 'GET'):                 (401, 403, 403, 403, 403, 200),
    ('metrics-targets', 'PUT'):                 (401, 403, 403, 403, 403, 200),
    ('metrics-throughput', 'GET'):              (401, 403, 403, 403, 403, 200),
    ('metrics-today', 'GET'):                   (401, 403, 403, 403, 403, 200),
    ('order-cancel', 'POST'):                   (401, 200, 404, 404, 404, 200),
    ('order-detail', 'GET'):                    (401, 200, 404, 404, 404, 200),
    ('order-links', 'GET'):                     (401, 200, 404, 404, 404, 200),
    ('order-list', 'GET'):                      (401, 200, 200, 200, 200, 200),
    ('order-list', 'POST'):                     (401, 201, 201, 201, 201, 201),
    ('order-script', 'GET'):                    (401, 200, 404, 404, 404, 200),
    ('prometheus', 'GET'):                      (401, 403, 403, 403, 403, 200),
    ('reconciliation-detail', 'GET'):           (401, 403, 403, 403, 403, 200),
    ('reconciliation-list', 'GET'):             (401, 403, 403, 403, 403, 200),
    ('reconciliation-list', 'POST'):            (401, 403, 403, 403, 403, 202),
    ('reconciliation-repair', 'POST'):          (401, 403, 403, 403, 403, 409),
    ('schema', 'GET'):                          (200, 200, 200, 200, 200, 200),
    ('silo-list', 'GET'):                       (401, 403, 403, 403, 403, 200),
    ('shape-upload', 'POST'):                   (400, 400, 400, 400, 400, 400),
    ('spa', 'GET'):                             (200, 200, 200, 200, 200, 200),
    ('stac:collection', 'GET'):                 (200, 200, 200, 200, 200, 200),
    ('stac:collections', 'GET'):                (200, 200, 200, 200, 200, 200),
    ('stac:conformance', 'GET'):                (200, 200, 200, 200, 200, 200),
    ('stac:item', 'GET'):                       (200, 200, 200, 200, 200, 200),
    ('stac:items', 'GET'):                      (200, 200, 200, 200, 200, 200),
    ('stac:landing', 'GET'):                    (200, 200, 200, 200, 200, 200),
    ('stac:search', 'GET'):                     (200, 200, 200, 200, 200, 200),
    ('stac:search', 'POST'):                    (200, 200, 200, 200, 200, 200),
    ('stac:unknown', 'GET'):                    (404, 404, 404, 404, 404, 404),
    ('stac:unknown', 'POST'):                   (404, 404, 404, 404, 404, 404),
    ('subscription-apply', 'POST'):             (401, 202, 404, 404, 404, 202),
    ('subscription-deliveries', 'GET'):         (401, 200, 404, 404, 404, 200),
    ('subscription-detail', 'DELETE'):          (401, 204, 404, 404, 404, 204),
    ('subscription-detail', 'GET'):             (401, 200, 404, 404, 404, 200),
    ('subscription-detail', 'PATCH'):           (401, 200, 404, 404, 404, 200),
    ('subscription-detail', 'PUT'):             (401, 200, 404, 404, 404, 200),
    ('subscription-list', 'GET'):               (401, 200, 200, 200, 200, 200),
    ('subscription-list', 'POST'):              (401, 201, 201, 201, 201, 201),
    ('subscription-preview', 'POST'):           (401, 200, 200, 200, 200, 200),
    ('token', 'POST'):                          (401, 200, 200, 200, 200, 200),
    ('token-list', 'GET'):                      (401, 200, 200, 200, 200, 200),
    ('token-list', 'POST'):                     (401, 201, 201, 201, 201, 201),
    # a token is its owner's: the first user's, as another's, answers as a missing one
    ('token-detail', 'DELETE'):                 (401, 200, 404, 404, 404, 404),
    # single sign-on: no provider is configured in the matrix, so both pages say so
    ('auth-methods', 'GET'):                    (200, 200, 200, 200, 200, 200),
    ('oidc-login', 'GET'):                      (404, 404, 404, 404, 404, 404),
    ('oidc-callback', 'GET'):                   (404, 404, 404, 404, 404, 404),
    ('volume-audit', 'POST'):                   (401, 403, 403, 403, 403, 202),
    ('volume-audit-sample', 'POST'):            (401, 403, 403, 403, 403, 202),
    ('volume-detail', 'GET'):                   (401, 403, 403, 403, 403, 200),
    ('volume-files', 'GET'):                    (401, 403, 403, 403, 403, 200),
    ('volume-groups', 'GET'):                   (401, 403, 403, 403, 403, 200),
    ('volume-label', 'POST'):                   (401, 403, 403, 403, 403, 201),
    ('volume-list', 'GET'):                     (401, 403, 403, 403, 403, 200),
    ('volume-repack', 'POST'):                  (401, 403, 403, 403, 403, 202),
    ('stage-request-cancel', 'POST'):           (401, 200, 404, 404, 404, 200),
    ('stage-request-detail', 'GET'):            (401, 200, 404, 404, 404, 200),
    ('stage-request-list', 'GET'):              (401, 200, 200, 200, 200, 200),
    ('stage-request-priority', 'POST'):         (401, 403, 403, 403, 403, 200),
    ('tape-archiveinfo', 'POST'):               (401, 200, 200, 200, 200, 200),
    ('tape-cancel', 'POST'):                    (401, 200, 404, 404, 404, 200),
    ('tape-discovery', 'GET'):                  (200, 200, 200, 200, 200, 200),
    ('tape-release', 'POST'):                   (401, 200, 404, 404, 404, 200),
    ('tape-stage', 'POST'):                     (401, 201, 201, 201, 201, 201),
    ('tape-stage-request', 'DELETE'):           (401, 200, 404, 404, 404, 200),
    ('tape-stage-request', 'GET'):              (401, 200, 404, 404, 404, 200),
}


@dataclass
class World:
    """The objects every request is made against, and a client per role."""

    clients: dict
    kwargs: dict
    bodies: dict


def routes():
    """{(url name, method): pattern} for every route and method of the URL conf."""
    found = {}

    def walk(patterns, prefix, namespace):
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, prefix + str(pattern.pattern),
                     pattern.namespace or namespace)
                continue
            route = prefix + str(pattern.pattern)
            if route.startswith(EXCLUDED_PREFIXES) or "format" in pattern.pattern.regex.groupindex:
                continue
            name = f"{namespace}:{pattern.name}" if namespace else pattern.name
            for method in _methods(pattern, name):
                found[(name, method)] = pattern
    walk(get_resolver().url_patterns, "", None)
    return found


def _methods(pattern: URLPattern, name):
    callback = pattern.callback
    actions = getattr(callback, "actions", None)
    view = getattr(callback, "cls", None) or getattr(callback, "view_class", None)
    if actions:
        methods = list(actions)
    elif view is None:
        return FUNCTION_VIEW_METHODS[name]
    else:
        methods = [m for m in view.http_method_names if hasattr(view, m)]
    return [m.upper() for m in methods if m not in IMPLIED_METHODS]


def test_every_route_has_expectations():
    known = set(routes())
    missing = sorted(known - set(EXPECTED))
    stale = sorted(set(EXPECTED) - known)
    assert not missing, f"routes without expectations (add rows to EXPECTED): {missing}"
    assert not stale, f"expectations for routes that are gone: {stale}"


def _world(data_root, settings):
    settings.FRONTEND_DIST = data_root / "dist"
    settings.FRONTEND_DIST.mkdir()
    (settings.FRONTEND_DIST / "index.html").write_text("<!doctype html><title>Granary</title>")
    settings.GRANARY_CACHE_BYTES = 1 << 30
    settings.GRANARY_WRITE_MAX_WAIT_S = settings.GRANARY_READ_MAX_WAIT_S = 0
    primary, backup, _ = small_layout()
    collection = archived_collection([primary, backup], short_name="MOD021KM", version="061",
                                     cadence_seconds=300)
    granule, spare = (_archived(collection, data_root) for _ in range(2))
    archive.run_until_idle()
    granule.refresh_from_db()
    file = granule.files.get()
    # Releasing a file from the cache removes it from disk, which no savepoint brings back.
    spare_file = spare.files.get()

    people = {role: UserFactory(role=group) for role, group in [
        ("user", roles.USER), ("user2", roles.USER), ("provider", roles.PROVIDER),
        ("provider2", roles.PROVIDER), ("operator", roles.OPERATOR)]}
    modaps, other = ProviderFactory(name="MODAPS"), ProviderFactory(name="OTHER")
    modaps.collections.add(collection)
    modaps.members.add(people["provider"])
    other.members.add(people["provider2"])

    alice = people["user"]
    order = orders.create_order(alice, [granule.pk], "https", None)
    destination = Destination.objects.create(user=alice, name="lab")
    subscription = Subscription.objects.create(user=alice, name="fires")
    subscription.collections.add(collection)
    CartItem.objects.create(user=alice, granule=granule)
    ingest = IngestRequest.objects.create(provider=modaps, way="bulk",
                                          submitted_by=people["provider"])
    pdr = Pdr.objects.create(provider=modaps, name="A.PDR", text="x", text_hash="x",
                             state=Pdr.State.REJECTED)
    volume = Volume.objects.order_by("label").first()
    drive = Drive.objects.order_by("name").first()
    request = ArchiveRequest.objects.order_by("pk").first()
    reconciliation = Reconciliation.objects.create(requested_by=people["operator"])
    # a bucket whose store has no endpoint: the board shows it down, and still answers
    Bucket.objects.create(name="matrix-objects", store="unconfigured", bucket="matrix")
    bulk_job = BulkJob.objects.create(kind="verify", reason="matrix", granules_total=0)
    hook = Endpoint.objects.create(user=alice, kind="webhook", url="https://example.org/hook",
                                   secret="whsec_" + "A" * 44)
    event = events.emit("order.ready", f"orders/{order.pk}", {"order": order.pk}, user=alice)
    tape_path = f"/{collection.key}/{granule.granule_id}/{file.name}"
    stage = staging.create_stage(alice, {"files": [{"path": tape_path}]})

    clients = {"anonymous": APIClient()}
    for role, person in people.items():
        clients[role] = APIClient()
        clients[role].force_authenticate(person)
    kwargs = {
        "pk": None, "key": collection.key, "granule": granule.pk, "file_id": file.pk,
        "label": volume.label, "name": drive.name, "path": "in/matrix.dat",
        "item_id": granule.granule_id,
        "order": order.pk, "destination": destination.pk, "subscription": subscription.pk,
        "ingest": ingest.pk, "pdr": pdr.pk, "archive-request": request.pk,
        "reconciliation": reconciliation.pk, "granule-detail": granule.pk,
        "provider": modaps.name, "config-user": alice.pk, "bulk-job": bulk_job.pk,
        "event-endpoint": hook.pk, "event": event.pk,
        "token": tokens.issue(alice, "matrix")[0].pk,
        "sign-in-rule": SignInRule.objects.create(value="matrix", role="user").pk,
        "stage-request": stage.pk, "stage_id": str(stage.pk),
    }
    bodies = {
        ("login", "POST"): {"username": alice.username, "password": "pw-for-tests"},
        ("cart", "POST"): {"granules": [granule.pk]},
        ("cart-matching", "POST"): {"filters": {"collection": collection.key}},
        ("order-list", "POST"): {"granules": [granule.pk], "delivery": "https"},
        ("destination-list", "POST"): {"name": "new"},
        ("destination-detail", "PUT"): {"name": "renamed"},
        ("destination-detail", "PATCH"): {"name": "renamed"},
        ("subscription-list", "POST"): {"name": "new", "collections": [collection.key]},
        ("subscription-preview", "POST"): {"collections": [collection.key]},
        ("subscription-detail", "PUT"): {"name": "fires", "collections": [collection.key],
                                         "active": False},
        ("subscription-detail", "PATCH"): {"active": False},
        ("subscription-apply", "POST"): {"since": "2024-01-01"},
        ("ingest-request-list", "POST"): {"provider": "MODAPS", "granules": []},
        ("ingest-pdr-list", "POST"): {"provider": "MODAPS", "name": "B.PDR",
                                      "text": "TOTAL_FILE_COUNT = 0;"},
        ("ingest-request-retry", "POST"): {},
        ("cache-pin", "POST"): {"files": [spare_file.pk]},
        ("cache-release", "POST"): {"files": [spare_file.pk]},
        ("drive-vary", "POST"): {"online": False, "reason": "cleaning"},
        ("volume-label", "POST"): {"silo": volume.silo.name, "media": volume.media.name,
                                   "count": 1, "prefix": "M"},
        ("volume-audit-sample", "POST"): {"sample": 1},
        ("archive-request-bulk", "POST"): {"action": "retry", "all": True},
        ("metrics-targets", "PUT"): {"ingest": 2.0},
        ("reconciliation-list", "POST"): {"scope": "sample", "sample": 1},
        ("reconciliation-repair", "POST"): {},
        ("console-failure-group-retry", "POST"): {"key": "0" * 20},
        ("console-failure-group-redeliver", "POST"): {"key": "0" * 20, "reason": "matrix"},
        ("console-granule-redeliver", "POST"): {"reason": "matrix"},
        ("console-dead-letter-replay", "POST"): {"all": True},
        ("bulk-job-list", "POST"): {"kind": "recall", "ids": [granule.pk], "dry_run": True},
        ("bulk-job-cancel", "POST"): {"reason": "matrix"},
        ("console-granule-withdraw", "POST"): {"reason": "matrix"},
        ("console-granule-restore", "POST"): {"reason": "matrix"},
        ("console-granule-delete", "POST"): {"reason": "matrix",
                                             "confirm_granule_id": granule.granule_id},
        ("config-collection-list", "POST"): {"short_name": "MATRIX", "version": "1",
                                             "title": "t", "policy": {"copies": ["primary"]}},
        ("config-collection-detail", "PATCH"): {"title": "renamed"},
        ("config-provider-list", "POST"): {"name": "NEWPROV"},
        ("config-provider-detail", "PATCH"): {"title": "renamed"},
        ("config-user-list", "POST"): {"username": "matrixnew", "role": "user"},
        ("config-user-detail", "PATCH"): {"email": "alice@example.net"},
        ("event-endpoint-list", "POST"): {"kind": "email", "rules": [{"type": "order.*"}]},
        ("event-endpoint-detail", "PATCH"): {"name": "lab hook"},
        ("token-list", "POST"): {"name": "matrix", "scopes": ["read"]},
        ("config-sign-in-rule-list", "POST"): {"value": "staff", "role": "operator",
                                               "provider": "MODAPS"},
        ("tape-stage", "POST"): {"files": [{"path": tape_path}]},
        ("tape-archiveinfo", "POST"): {"paths": [tape_path]},
        ("tape-cancel", "POST"): {"paths": [tape_path]},
        ("tape-release", "POST"): {"paths": [tape_path]},
        ("stage-request-priority", "POST"): {"priority": 0},
    }
    return World(clients, kwargs, bodies)


def _archived(collection, data_root):
    granule, sources = staged_granule(collection, data_root / "staging", sizes=(800,))
    assert archive.archive_granule(granule, sources).admitted
    return granule


PK_OF = {"order": "order", "destination": "destination", "subscription": "subscription",
         "ingest-request": "ingest", "ingest-pdr": "pdr", "archive-request": "archive-request",
         "reconciliation": "reconciliation", "granule": "granule-detail",
         "console-granule": "granule-detail", "config-user": "config-user",
         "bulk-job": "bulk-job", "event-endpoint": "event-endpoint", "event": "event",
         "token": "token", "config-sign-in-rule": "sign-in-rule",
         "stage-request": "stage-request"}


def _url(world, name, pattern):
    if name in FIXED_PATHS:
        return FIXED_PATHS[name]
    return _reversed(world, name, pattern) + QUERIES.get(name, "")


def _reversed(world, name, pattern):
    kwargs = {}
    for key in pattern.pattern.regex.groupindex:
        if key == "pk":
            owner = next(prefix for prefix in PK_OF if name.startswith(prefix + "-"))
            kwargs[key] = world.kwargs[PK_OF[owner]]
        else:
            kwargs[key] = world.kwargs[key]
    return reverse(name, kwargs=kwargs)


def _ask(world, role, name, method, url):
    """One request in a savepoint that is rolled back: the next role meets the same objects."""
    cache.clear()
    client = world.clients[role]
    with transaction.atomic():
        if name == "ingest-upload":
            response = client.generic(method, url, b"0123456789",
                                      content_type="application/octet-stream")
        else:
            response = client.generic(method, url, **_json(world.bodies.get((name, method))))
        if getattr(response, "streaming", False):
            b"".join(response.streaming_content)
        transaction.set_rollback(True)
    return response.status_code


def _json(body):
    if body is None:
        return {}
    return {"data": json.dumps(body), "content_type": "application/json"}


@pytest.mark.django_db
def test_each_role_gets_the_expected_status_from_every_route(data_root, settings):
    world = _world(data_root, settings)
    wrong = []
    observed = {}
    for (name, method), pattern in sorted(routes().items()):
        url = _url(world, name, pattern)
        got = tuple(_ask(world, role, name, method, url) for role in ROLES)
        observed[(name, method)] = got
        want = EXPECTED.get((name, method))
        if got != want:
            wrong.append(f"    ({name!r}, {method!r}): {got},  # expected {want} at {url}")
    assert not wrong, "statuses differ from EXPECTED (anon user user2 prov prov2 oper):\n" + \
        "\n".join(wrong)
