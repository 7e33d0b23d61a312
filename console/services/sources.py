"""Where failed work lives, read alike: each source gives the failed rows of one kind of work as
(id, reason, collection key, when) and sends chosen ones round again through the retry service
of the app that owns them. Failures and the dead-letter list are both views over these rows."""
from collections.abc import Callable
from dataclasses import dataclass, field

from django.db.models import F, Q, Value
from django.db.models.functions import Coalesce, Concat

from backend.archive import services as archive
from backend.archive.models import ArchiveRequest
from distribution import services as distribution
from distribution.models import OrderItem, SubscriptionDelivery
from ingest import services as ingest
from ingest.models import IngestGranule, IngestRequest

INGEST, ARCHIVE, DISTRIBUTION = "ingest", "archive", "distribution"
WHERE = (INGEST, ARCHIVE, DISTRIBUTION)


@dataclass(frozen=True)
class Source:
    """One kind of failed work: `rows()` its failed rows, `retry(ids)` sends some again and
    answers (how many, [(id, why not)])."""

    where: str
    kind: str
    queryset: Callable          # () -> the failed rows
    fields: tuple               # (reason, collection key, when) expressions
    collection_lookup: Callable  # collection key -> Q
    retry: Callable
    # ids -> {id: [action]}: what can still be done about each (None: a retry always can)
    actions: Callable | None = field(default=None)

    @property
    def name(self):
        return f"{self.where}/{self.kind}"

    def rows(self, since=None, collection=None):
        """The failed rows, filtered, annotated with _reason, _collection (key) and _at."""
        rows = self.queryset().annotate(
            _reason=self.fields[0], _collection=self.fields[1], _at=self.fields[2])
        if since is not None:
            rows = rows.filter(_at__gte=since)
        if collection:
            rows = rows.filter(self.collection_lookup(collection))
        return rows.order_by()


def key_of(prefix):
    return Concat(F(f"{prefix}__short_name"), Value("."), F(f"{prefix}__version"))


def key_lookup(prefix):
    def lookup(key):
        short_name, _, version = key.rpartition(".")
        return Q(**{f"{prefix}__short_name": short_name, f"{prefix}__version": version})
    return lookup


def retry_ingest(ids):
    """Ingest's own retry, once per request, for the failed granules at these positions."""
    rows = IngestGranule.objects.filter(pk__in=list(ids), state=IngestGranule.State.FAILED)
    positions = {}
    for request_id, position in rows.values_list("request_id", "position"):
        positions.setdefault(request_id, []).append(position)
    retried = 0
    for request in IngestRequest.objects.filter(pk__in=positions).order_by("pk"):
        retried += ingest.retry(request, positions[request.pk])
    return retried, []


def retry_archive(ids):
    """The archive's retry_failed; a request whose work is queued again already is superseded
    (cancelled) by it rather than queued twice, and says so."""
    chosen = list(ArchiveRequest.objects.filter(pk__in=list(ids),
                                                state=ArchiveRequest.State.FAILED))
    retried = archive.retry_failed(chosen)
    superseded = ArchiveRequest.objects.filter(
        pk__in=[r.pk for r in chosen], state=ArchiveRequest.State.CANCELLED)
    return retried, [(pk, error) for pk, error in superseded.values_list("pk", "error")]


def ingest_actions(ids):
    """Ingest's own judgement of each failed granule (explain_failed)."""
    rows = IngestGranule.objects.filter(pk__in=list(ids)).select_related("request__provider")
    return {pk: told["actions"] for pk, told in ingest.explain_failed(rows).items()}


def archive_actions(ids):
    """The archive's judgement of each failed request (request_actions)."""
    rows = ArchiveRequest.objects.filter(pk__in=list(ids)).values_list(
        "pk", "state", "file_id", "file__name")
    return archive.request_actions(list(rows))


def _ingest_source():
    return Source(
        INGEST, "granule",
        lambda: IngestGranule.objects.filter(state=IngestGranule.State.FAILED),
        (F("reason"), F("collection_key"), F("updated_at")),
        lambda key: Q(collection_key=key), retry_ingest, ingest_actions)


def _archive_source(kind):
    return Source(
        ARCHIVE, kind,
        lambda: ArchiveRequest.objects.filter(state=ArchiveRequest.State.FAILED, kind=kind),
        (F("error"), key_of("file__granule__collection"),
         Coalesce("finished_at", "created_at")),
        key_lookup("file__granule__collection"), retry_archive, archive_actions)


def _order_item_source():
    return Source(
        DISTRIBUTION, "order_item",
        lambda: OrderItem.objects.filter(state=OrderItem.State.FAILED),
        (F("error"), key_of("granule__collection"), F("order__updated_at")),
        key_lookup("granule__collection"), distribution.retry_items)


def _delivery_source():
    return Source(
        DISTRIBUTION, "subscription_delivery",
        lambda: SubscriptionDelivery.objects.filter(state=SubscriptionDelivery.State.FAILED),
        (F("detail"), key_of("granule__collection"), F("created_at")),
        key_lookup("granule__collection"), distribution.retry_deliveries)


SOURCES = (_ingest_source(), *(_archive_source(k) for k in ArchiveRequest.Kind.values),
           _order_item_source(), _delivery_source())
KINDS = tuple(sorted({s.kind for s in SOURCES}))


def chosen(where=None, kind=None):
    """The sources a `where` and `kind` filter leave."""
    return [s for s in SOURCES if (not where or s.where == where) and (not kind or s.kind == kind)]
