"""The operator's page of one granule: every file with its cache state and every copy, and a
timeline derived from the rows the apps already keep (ingest, cache, copies, recalls, orders,
subscription deliveries) and the audit trail. Nothing here is stored: the page is a reading
of the state, so it can never disagree with it."""
from dataclasses import dataclass, field
from datetime import datetime

from backend.accounts.audit import events_for
from backend.archive.models import ArchiveRequest, CacheEntry, FileCopy
from backend.catalog.models import Granule
from backend.catalog.retired import retired_reason
from backend.errors import NotFound
from distribution.models import OrderItem, SubscriptionDelivery
from ingest.models import IngestGranule

from . import stuck

# how many rows of each source the timeline reads at most (a popular granule is ordered often)
MAX_ROWS = 200


@dataclass
class Event:
    at: datetime
    kind: str        # ingest, catalog, cache, copy, recall, order, subscription, audit
    text: str
    actor: str = ""
    reason: str = ""


@dataclass
class GranulePage:
    granule: Granule
    provider: str | None
    files: list
    timeline: list = field(default_factory=list)
    retired_reason: str | None = None
    failure: str | None = None
    actions: list = field(default_factory=list)


def granule_page(granule_id):
    """The page of granule `granule_id` (any state: the console sees deleted ones too)."""
    granule = Granule.objects.select_related("collection").filter(pk=granule_id).first()
    if granule is None:
        raise NotFound(f"There is no granule {granule_id}.")
    files = list(granule.files.order_by("name"))
    file_ids = [f.pk for f in files]
    copies = list(FileCopy.objects.filter(file_id__in=file_ids)
                  .select_related("volume__group", "bucket")
                  .order_by("copy_number", "segment", "pk"))
    cache = {e.file_id: e for e in CacheEntry.objects.filter(file_id__in=file_ids)}
    for f in files:
        f.copy_rows = [c for c in copies if c.file_id == f.pk]
        f.cache = cache.get(f.pk)
    ingests = list(IngestGranule.objects.filter(
        collection_key=granule.collection.key, granule_id=granule.granule_id)
        .select_related("request__provider").order_by("created_at", "pk")[:MAX_ROWS])
    mine = [i for i in ingests if i.catalog_granule_id == granule.pk]
    provider = mine[-1].request.provider.name if mine else None
    granule.provider = provider
    timeline = (_catalog_events(granule) + _ingest_events(granule, ingests)
                + _archive_events(files, copies, cache) + _distribution_events(granule)
                + _audit_events(granule))
    timeline.sort(key=lambda e: e.at)
    return GranulePage(granule, provider, files, timeline, retired_reason(granule),
                       stuck.failures([granule]).get(granule.pk), stuck.granule_actions(granule))


def _catalog_events(granule):
    events = [Event(granule.created_at, "catalog",
                    f"registered in the catalog as version {granule.version}")]
    if granule.archived_at:
        events.append(Event(granule.archived_at, "catalog",
                            "archived: every copy its policy asks for is verified"))
    return events


def _ingest_events(granule, ingests):
    events = []
    for row in ingests:
        request = row.request
        where = f"ingest request {request.pk} ({request.way}, {request.provider.name})"
        events.append(Event(row.created_at, "ingest", f"received in {where}"))
        if row.catalog_granule_id not in (None, granule.pk):
            continue
        if row.state == IngestGranule.State.FAILED:
            events.append(Event(row.updated_at, "ingest", f"failed in {where}",
                                reason=row.reason or row.disposition))
        elif row.catalog_granule_id == granule.pk:
            events.append(Event(row.created_at, "ingest", f"validated in {where}"))
    return events


def _archive_events(files, copies, cache):
    names = {f.pk: f.name for f in files}
    events = [Event(e.created_at, "cache", f"{names[fid]} cached ({e.state})")
              for fid, e in cache.items()]
    for c in copies:
        where = f"{names[c.file_id]} copy {c.copy_number}"
        where += f" segment {c.segment}" if c.segment else ""
        where += (f" on {c.volume.label}" if c.volume_id
                  else f" in the object store ({c.bucket.name})")
        if c.verified_at and c.verified_at <= c.created_at:
            # a mover records a copy once it has read it back: one moment, the verification's
            events.append(Event(c.verified_at, "copy", f"{where} written and verified"))
            continue
        events.append(Event(c.created_at, "copy", f"{where} written"))
        if c.verified_at:
            events.append(Event(c.verified_at, "copy", f"{where} verified"))
    recalls = (ArchiveRequest.objects.filter(file_id__in=list(names),
                                             kind=ArchiveRequest.Kind.RECALL)
               .select_related("bucket").order_by("-created_at")[:MAX_ROWS])
    for r in recalls:
        events.append(Event(r.created_at, "recall", f"{names[r.file_id]} recall requested"))
        if r.finished_at:
            # a recall the object store served keeps its bucket; one tape served has none
            source = f" from the object store ({r.bucket.name})" if r.bucket_id else ""
            events.append(Event(r.finished_at, "recall",
                                f"{names[r.file_id]} recall {r.state}{source}", reason=r.error))
    return events


def _distribution_events(granule):
    events = []
    items = (OrderItem.objects.filter(granule=granule).select_related("order__user", "file")
             .order_by("-order__created_at")[:MAX_ROWS])
    ordered = set()
    for item in items:
        order = item.order
        if order.pk not in ordered:
            ordered.add(order.pk)
            events.append(Event(order.created_at, "order",
                                f"ordered in order {order.pk}", actor=order.user.username))
        if item.state == OrderItem.State.FAILED and item.error:
            events.append(Event(item.ready_at or order.updated_at, "order",
                                f"{item.file.name} failed in order {order.pk}",
                                reason=item.error))
        for moment, verb in ((item.downloaded_at, "downloaded"), (item.pushed_at, "pushed")):
            if moment:
                events.append(Event(moment, "order", f"{item.file.name} {verb} "
                                    f"(order {order.pk})", actor=order.user.username))
    for d in (SubscriptionDelivery.objects.filter(granule=granule)
              .select_related("subscription__user").order_by("-created_at")[:MAX_ROWS]):
        who = d.subscription.user.username
        text = f"subscription {d.subscription.name!r} {d.state}"
        events.append(Event(d.delivered_at or d.created_at, "subscription", text, actor=who,
                            reason=d.detail if d.state == d.State.FAILED else ""))
    return events


def _audit_events(granule):
    return [Event(e.at, "audit", e.action, actor=e.actor_name, reason=e.reason)
            for e in events_for("granule", granule.pk)[:MAX_ROWS]]
