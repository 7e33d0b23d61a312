"""The object tier as operators watch it (the archive board and /metrics): per bucket what it
holds, the object movers' work, the puts and gets done, the failures, and whether its store
answers.

Every bucket's store is asked at once, in threads, and the board waits at most HEALTH_WAIT_S
for the answers: a store that is down or slow costs the board that wait once and shows its
reason, never an error. A store still not answering is asked again only once its last question
ends (boards in between wait for nothing), so a board polled every few seconds neither piles up
threads on a dead endpoint nor waits on each poll.
"""
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import wait as wait_for
from datetime import timedelta

from django.conf import settings
from django.db.models import Count, Sum
from django.db.models.functions import Coalesce
from django.utils import timezone

from .media import Health
from .models import ArchiveRequest, Bucket, FileCopy
from .services.buckets import store_for
from .services.queueing import WAITING_FOR_CACHE

Req = ArchiveRequest

HEALTH_TIMEOUT_S = 2.0   # connect timeout of each question to a store (reads get 3x)
HEALTH_WAIT_S = 2.5      # how long a board or a scrape waits for every store's answer
OBJECT_KINDS = (Req.Kind.MIGRATE, Req.Kind.RECALL)   # what object movers do
PENDING = (Req.State.QUEUED, Req.State.RUNNING)
# errors a queued request carries while it waits its turn: no failure of the store's
WAITS = (WAITING_FOR_CACHE, "waiting for cache space")

_lock = threading.Lock()
_pool = None
_asking = {}    # (store config, bucket on the server) -> (the question still out, its deadline)


def _ask(store):
    try:
        return store.health()
    except Exception as exc:   # noqa: BLE001 - whatever failed, the board shows it as the reason
        return Health(False, str(exc) or type(exc).__name__)


def health_of(buckets, wait_s=HEALTH_WAIT_S):
    """{bucket pk: Health} for these buckets, each store asked once at a time: a question an
    earlier board left out is waited for only what remains of its own wait_s."""
    global _pool
    now = time.monotonic()
    questions = {}
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="bucket-health")
        for bucket in buckets:
            config = settings.GRANARY_OBJECT_STORES.get(bucket.store) or {}
            place = (json.dumps(config, sort_keys=True, default=str), bucket.store, bucket.bucket)
            store = store_for(bucket)
            store.timeout_s = min(store.timeout_s, HEALTH_TIMEOUT_S)
            asked = _asking.get(place)
            if asked is None or asked[0].done():
                asked = _asking[place] = (_pool.submit(_ask, store), now + wait_s)
            questions[bucket.pk] = (place, asked, store.where)
    until = max((deadline for _, (_, deadline), _ in questions.values()), default=now)
    wait_for([future for _, (future, _), _ in questions.values()],
             timeout=max(0.0, until - time.monotonic()))
    answers = {}
    with _lock:
        for pk, (place, (future, _), where) in questions.items():
            if not future.done():
                answers[pk] = Health(False, f"{where} did not answer within {wait_s:g} s")
                continue
            answers[pk] = future.result()
            if _asking.get(place, (None,))[0] is future:
                del _asking[place]
    return answers


def _held():
    rows = (FileCopy.objects.filter(bucket__isnull=False, state=FileCopy.State.VERIFIED)
            .values("bucket").annotate(n=Count("id"), nbytes=Sum("length")).order_by())
    return {r["bucket"]: (r["n"], r["nbytes"] or 0) for r in rows}


def _pending():
    """{(bucket pk, kind, state): (requests, bytes)} of the queued and running object work."""
    rows = (Req.objects.filter(bucket__isnull=False, state__in=PENDING)
            .values("bucket", "kind", "state")
            .annotate(n=Count("id"), nbytes=Sum("bytes_total")).order_by())
    return {(r["bucket"], r["kind"], r["state"]): (r["n"], r["nbytes"] or 0) for r in rows}


def _done(since=None):
    """{(bucket pk, kind): (requests, bytes)} of object migrations (puts) and recalls (gets)
    done, since `since` or ever."""
    done = Req.objects.filter(bucket__isnull=False, state=Req.State.DONE, kind__in=OBJECT_KINDS)
    if since is not None:
        done = done.filter(finished_at__gte=since)
    rows = (done.values("bucket", "kind").annotate(n=Count("id"), nbytes=Sum("bytes_done"))
            .order_by())
    return {(r["bucket"], r["kind"]): (r["n"], r["nbytes"] or 0) for r in rows}


def _failing():
    return (Req.objects.filter(bucket__isnull=False, state__in=[Req.State.QUEUED,
                                                                 Req.State.FAILED])
            .exclude(error="").exclude(error__in=WAITS))


def _failures():
    """{bucket pk: (requests, the latest error, when)}: object work that failed, or went back
    to the queue with the reason (a store that is down)."""
    counts = {r["bucket"]: r["n"] for r in
              _failing().values("bucket").annotate(n=Count("id")).order_by()}
    out = {}
    for bucket_id, n in counts.items():
        latest = (_failing().filter(bucket_id=bucket_id)
                  .annotate(at=Coalesce("finished_at", "started_at", "created_at"))
                  .order_by("-at", "-pk").values("error", "at").first())
        out[bucket_id] = (n, latest["error"] if latest else "", latest["at"] if latest else None)
    return out


def bucket_board(now=None, wait_s=HEALTH_WAIT_S):
    """Each bucket with its figures, for the archive board (BucketBoardSerializer)."""
    now = now or timezone.now()
    buckets = list(Bucket.objects.order_by("name"))
    if not buckets:
        return []
    held, pending, failures = _held(), _pending(), _failures()
    hour = _done(since=now - timedelta(hours=1))
    health = health_of(buckets, wait_s)
    rows = []
    for b in buckets:
        objects, nbytes = held.get(b.pk, (0, 0))
        work = []
        for kind in OBJECT_KINDS:
            queued, queued_bytes = pending.get((b.pk, kind, Req.State.QUEUED), (0, 0))
            running, running_bytes = pending.get((b.pk, kind, Req.State.RUNNING), (0, 0))
            work.append({"kind": kind, "queued": queued, "queued_bytes": queued_bytes,
                         "running": running, "running_bytes": running_bytes})
        puts, put_bytes = hour.get((b.pk, Req.Kind.MIGRATE), (0, 0))
        gets, get_bytes = hour.get((b.pk, Req.Kind.RECALL), (0, 0))
        failed, error, error_at = failures.get(b.pk, (0, "", None))
        rows.append({
            "name": b.name, "store": b.store, "bucket": b.bucket, "prefix": b.prefix,
            "objects": objects, "bytes": nbytes, "work": work,
            "last_hour": {"puts": puts, "put_bytes": put_bytes, "gets": gets,
                          "get_bytes": get_bytes},
            "failures": {"requests": failed, "last_error": error, "last_error_at": error_at},
            "health": {"ok": health[b.pk].ok, "reason": health[b.pk].reason},
        })
    return rows


def collect():
    """The object tier's Prometheus families (exposition.collect yields them)."""
    from backend.metrics.exposition import counter, gauge

    buckets = list(Bucket.objects.order_by("name"))
    held, pending, done = _held(), _pending(), _done()
    yield gauge("granary_bucket_objects", "Verified object copies a bucket holds", ["bucket"],
                (((b.name,), held.get(b.pk, (0, 0))[0]) for b in buckets))
    yield gauge("granary_bucket_bytes", "Bytes of the verified object copies a bucket holds",
                ["bucket"], (((b.name,), held.get(b.pk, (0, 0))[1]) for b in buckets))
    yield gauge("granary_object_requests", "Object work queued or running, by bucket, kind "
                "and state", ["bucket", "kind", "state"],
                (((b.name, kind, state), pending.get((b.pk, kind, state), (0, 0))[0])
                 for b in buckets for kind in OBJECT_KINDS for state in PENDING))
    for kind, verb in ((Req.Kind.MIGRATE, "put"), (Req.Kind.RECALL, "get")):
        yield counter(f"granary_object_{verb}s", f"Object {verb}s done (finished {kind}s)",
                      ["bucket"], (((b.name,), done.get((b.pk, kind), (0, 0))[0])
                                   for b in buckets))
        yield counter(f"granary_object_{verb}_bytes", f"Bytes of the object {verb}s done",
                      ["bucket"], (((b.name,), done.get((b.pk, kind), (0, 0))[1])
                                   for b in buckets))
    failing = {r["bucket"]: r["n"] for r in
               _failing().values("bucket").annotate(n=Count("id")).order_by()}
    yield gauge("granary_object_failures", "Object work that failed, or was queued again with "
                "an error", ["bucket"], (((b.name,), failing.get(b.pk, 0)) for b in buckets))
    health = health_of(buckets) if buckets else {}
    yield gauge("granary_bucket_up", "1 when the bucket's store answers, 0 when not",
                ["bucket"], (((b.name,), int(health[b.pk].ok)) for b in buckets))
