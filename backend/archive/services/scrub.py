"""The cache scrub (beat): cached files read in full again, the longest unverified first, so
silent rot (a bit flipped on disk; size and mtime as they were) is found in files nobody
downloads whole, and every clean file is verified within GRANARY_CACHE_SCRUB_S: the bound a
range request relies on (serving.open_for_serving).

Each run reads at most GRANARY_CACHE_SCRUB_BYTES (one file more when a file is larger) among
the files last verified more than half the bound ago, so the cache stays within the bound
while it holds no more than that budget times the runs in half the bound. Dirty files are left
to their migration, which reads them and checks them against the catalog first. Idempotent:
a run only hashes and records; a damaged copy is dropped and recalled as a download would.
"""
import logging
from datetime import timedelta

from django.conf import settings
from django.db.models import F, Q
from django.utils import timezone

from ..models import CacheEntry
from .policy import ArchiveError
from .serving import CacheDamaged, verify_cached

log = logging.getLogger(__name__)

CANDIDATES = 1000


def scrub(budget=None, now=None):
    """One scrub run; {"files": hashed, "bytes": read, "damaged": found damaged}."""
    budget = settings.GRANARY_CACHE_SCRUB_BYTES if budget is None else budget
    due = (now or timezone.now()) - timedelta(seconds=settings.GRANARY_CACHE_SCRUB_S / 2)
    entries = (CacheEntry.objects
               .filter(state__in=[CacheEntry.State.CLEAN, CacheEntry.State.PINNED])
               .filter(Q(verified_at__isnull=True) | Q(verified_at__lt=due))
               .order_by(F("verified_at").asc(nulls_first=True), "pk")
               .select_related("file").defer("blocks")[:CANDIDATES])
    done = {"files": 0, "bytes": 0, "damaged": 0}
    for entry in entries:
        if done["bytes"] >= budget:
            break
        try:
            verify_cached(entry.file)
        except CacheDamaged:
            done["damaged"] += 1
        except ArchiveError:
            continue                    # left the cache meanwhile
        done["files"] += 1
        done["bytes"] += entry.size
    if done["damaged"]:
        log.error("cache scrub: %(damaged)d of %(files)d files read (%(bytes)d bytes) were "
                  "damaged", done)
    return done
