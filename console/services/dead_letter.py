"""The dead-letter list: work that used up its retries and now waits for an operator, read from
the rows themselves (no copy to fall out of step), and replayed from a fresh count.

What "used up its retries" means differs per kind, as each app counts its own attempts:
- archive requests: `attempts` reached the archive's MAX_ATTEMPTS (requeue() then fails them).
  A request failed at its first attempt (a file's own fault no retry can mend) is a failure,
  not a dead letter.
- ingest granules: `attempts` passed GRANARY_INGEST_MAX_ATTEMPTS: the worker died each time it
  held the granule and the pipeline gave up. Bad input (a wrong checksum) fails at once: a
  failure, not a dead letter.
- order items: a push order failed GRANARY_PUSH_MAX_ATTEMPTS times (Order.push_attempts) and
  its undelivered items failed with it.
- event deliveries: a webhook, mail or AMQP delivery that used GRANARY_EVENTS_MAX_TRIES (or
  waited behind one that did, on the same endpoint); replay sends them again through the
  endpoint's lane.
- subscription deliveries have no notion of retries used up, so none is a dead letter: a
  delivery whose notice cannot be sent rolls back with its transaction (its `attempts` is not
  even counted) and stays pending for every later sweep, without bound; FAILED is a refusal
  at the first try (the user may no longer see the collection), which no retry mends. Failed
  ones are in the failure groups, with their retry.
"""
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.db.models import CharField, F, Q, Value
from django.db.models.functions import Cast, Coalesce, Concat

from backend.accounts.audit import record
from backend.archive import services as archive
from backend.archive.models import ArchiveRequest
from backend.errors import DomainError
from backend.events import services as events
from backend.events.models import Delivery as EventDelivery
from distribution import services as distribution_services
from distribution.models import OrderItem
from ingest.models import IngestGranule

from .sources import key_lookup, key_of, retry_archive, retry_ingest

ACTION = "dead_letter.replay"


@dataclass(frozen=True)
class Kind:
    name: str
    queryset: Callable      # () -> the dead rows
    max_attempts: Callable  # () -> the bound they reached
    fields: dict            # label, reason, attempts, collection, at expressions
    collection_lookup: Callable
    replay: Callable        # ids -> (how many, [(id, why not)])

    def rows(self, since=None, collection=None):
        rows = self.queryset().annotate(**{f"_{k}": v for k, v in self.fields.items()})
        if since is not None:
            rows = rows.filter(_at__gte=since)
        if collection:
            rows = rows.filter(self.collection_lookup(collection))
        return rows


def _text(expression):
    return Cast(expression, output_field=CharField())


KINDS = {k.name: k for k in (
    Kind("archive",
         lambda: ArchiveRequest.objects.filter(state=ArchiveRequest.State.FAILED,
                                               attempts__gte=archive.MAX_ATTEMPTS),
         lambda: archive.MAX_ATTEMPTS,
         {"label": Concat(F("kind"), Value(" #"), _text("pk"), Value(" "),
                          Coalesce(F("file__name"), Value(""))),
          "reason": F("error"), "attempts": F("attempts"),
          "collection": key_of("file__granule__collection"),
          "at": Coalesce("finished_at", "created_at")},
         key_lookup("file__granule__collection"), retry_archive),
    Kind("ingest",
         lambda: IngestGranule.objects.filter(
             state=IngestGranule.State.FAILED,
             attempts__gt=settings.GRANARY_INGEST_MAX_ATTEMPTS),
         lambda: settings.GRANARY_INGEST_MAX_ATTEMPTS,
         {"label": Concat(F("granule_id"), Value(" (request "), _text("request_id"),
                          Value(")")),
          "reason": F("reason"), "attempts": F("attempts"), "collection": F("collection_key"),
          "at": F("updated_at")},
         lambda key: Q(collection_key=key), retry_ingest),
    Kind("order_item",
         lambda: OrderItem.objects.filter(
             state=OrderItem.State.FAILED,
             order__push_attempts__gte=settings.GRANARY_PUSH_MAX_ATTEMPTS),
         lambda: settings.GRANARY_PUSH_MAX_ATTEMPTS,
         {"label": Concat(Value("order "), _text("order_id"), Value(": "), F("file__name")),
          "reason": F("error"), "attempts": F("order__push_attempts"),
          "collection": key_of("granule__collection"), "at": F("order__updated_at")},
         key_lookup("granule__collection"), distribution_services.retry_items),
    Kind("event",
         lambda: EventDelivery.objects.filter(state=EventDelivery.State.DEAD),
         lambda: settings.GRANARY_EVENTS_MAX_TRIES,
         {"label": Concat(F("event__type"), Value(" to endpoint "), _text("endpoint_id"),
                          Value(" "), F("endpoint__url")),
          "reason": F("last_error"), "attempts": F("attempts"),
          "collection": F("event__collection_key"), "at": F("created_at")},
         lambda key: Q(event__collection_key=key),
         lambda ids: events.replay(EventDelivery.objects.filter(pk__in=ids))),
)}

KIND_NAMES = tuple(KINDS)
_VALUES = ("pk", "_label", "_reason", "_attempts", "_collection", "_at")


def _chosen(kind):
    if kind is None:
        return list(KINDS.values())
    return [KINDS[kind]]


def dead_letters(kind=None, since=None, collection=None, limit=50, offset=0):
    """(total, one page of rows): every kind in turn, each newest first."""
    total, page = 0, []
    for dead in _chosen(kind):
        rows = dead.rows(since, collection)
        count = rows.count()
        start = max(0, offset - total)
        room = limit - len(page)
        if room > 0 and start < count:
            bound = dead.max_attempts()
            for pk, label, reason, attempts, key, at in (
                    rows.order_by("-_at", "-pk").values_list(*_VALUES)[start:start + room]):
                page.append({"kind": dead.name, "id": pk, "label": label, "reason": reason,
                             "attempts": attempts, "max_attempts": bound,
                             "collection": key or None, "at": at})
        total += count
    return total, page


def replay(actor, ids=None, kind=None, since=None, collection=None, everything=False,
           reason=""):
    """Send dead letters round again from a fresh count: those named by id per kind, or all
    that a filter selects. Only rows dead now are touched, so a replay sent twice does the
    work once; the broker messages go once this commits. Audited in the same transaction."""
    if ids is None and kind is None and since is None and not collection and not everything:
        raise DomainError("Name the dead letters to replay: ids per kind, or a filter "
                          "(kind, since, collection; all: true for every one).")
    outcome = {"replayed": 0, "not_replayed": [], "by_kind": {}}
    with transaction.atomic():
        for dead in _chosen(kind):
            rows = dead.rows(since, collection)
            if ids is not None:
                wanted = set(ids.get(dead.name, ()))
                if not wanted:
                    continue
                rows = rows.filter(pk__in=wanted)
            chosen = list(rows.values_list("pk", flat=True))
            if ids is not None:
                outcome["not_replayed"] += [
                    {"kind": dead.name, "id": pk, "reason": "not a dead letter now"}
                    for pk in sorted(wanted - set(chosen))]
            done, skipped = dead.replay(chosen) if chosen else (0, [])
            outcome["by_kind"][dead.name] = done
            outcome["replayed"] += done
            outcome["not_replayed"] += [{"kind": dead.name, "id": pk, "reason": why}
                                        for pk, why in skipped]
        record(actor, ACTION, "dead_letter", kind or "all",
               label=f"replayed {outcome['replayed']}", reason=reason,
               detail={"by_kind": outcome["by_kind"], "kind": kind,
                       "collection": collection or "",
                       "since": since.isoformat() if since else "",
                       "not_replayed": len(outcome["not_replayed"])})
    return outcome
