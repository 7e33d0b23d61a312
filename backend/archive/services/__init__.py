"""Operations of the archive tier: the RAID cache, migration to tape, recall, and their state.

This package exports what other apps use (everything else is the storage manager's own and is
imported from its module: paths, policy, queueing, completeness, cache, admission, recall,
drives, writing, reading, background, manager):

- archive_granule(granule, sources) -> Admission
    Take a registered granule's files (sources: File.pk -> path of the validated bytes,
    usually in staging) into the cache and queue one migration per copy its policy requires.
    Never fails for lack of cache space: it answers admitted=False and the caller tries again.
    The granule becomes ARCHIVED, and `signals.granule_archived` is sent, once every copy is
    written and verified (and `signals.granules_archived` once per batch archived together).
- archive_granules([(granule, sources)]) -> [Admission]
    The same for many granules at once (one reservation, one transaction, one nudge).
- make_available(files, requested_by=None, priority=USER) -> [Availability]
    Files in the cache are ready now; the others get a recall (one per file, shared by all who
    ask) and an estimate of when they will be.
- cancel_recalls(request ids, still_needed, reason): queued recalls nobody needs any more
  cancelled (a stage request cancelled); the caller names its own needers, and layers above
  that need recalls of their own (the console's bulk recalls) register theirs once with
  register_recall_needer(name, needer(file ids) -> file ids still waited for).
- recalls_eta_s(request ids): about when the last of those recalls is done (a stage
  request's ETA).
- estimate_availability(granule ids) -> {granule id: (in_cache, eta_s)}
    Whether each granule is all in the cache, else about when it would be if ordered now;
    nothing is queued.
- touch_if_cached(file), cache_path(file): whether a file is in the cache (marked as used),
    and where.
- open_for_serving(file, verified_within=None): the cached copy opened to be served as it is
    (a range), its bytes the catalog's (re-hashed when the file changed since it was last
    checked, or was not read in full within `verified_within` seconds); ArchiveError when not
    cached, CacheDamaged (an ArchiveError) when its bytes fail the catalog checksum.
- open_checked(file): the whole cached copy as a reader that checks each CHECK_BLOCK before
    handing it out; read() raises CacheDamaged (the copy dropped and recalled) mid-file.
- open_object_for_serving(file, start, end): a file not in the cache read from its object
    copy (a direct download needs no recall); None when it is on tape only.
- policy_copies(collection): the copies a collection's policy requires (ArchiveError if none).
- MAX_ATTEMPTS: how many times a request is tried before it stays failed.
- run_until_idle(): every drive worked in this process until none has work (tests, bench).
- withdraw_granule, restore_granule, delete_granule (RETIRE_REASON_MAX): a granule's
  lifecycle after archiving, by an operator, audited.
- queue_copy(file, n, target), complete_copies(files), readable_copies(): a copy written
  again (bulk moves), and which copies count.
- audit_files(files), retry_failed(requests): re-verify copies; failed work again.
- keep_until(file ids, until), end_keep(file id, kept_until): what an order keeps in the
  cache, and its end (distribution's keeps go through here).
- request_actions(requests), damaged_only_copies(file ids), copy_work(granule ids),
  fail_for_redelivery(granule, by, reason): what can still be done about failed archive work
  (retry, or only a redelivery when a file's only copy is damaged in the cache), what a
  granule's copies wait for, and giving a granule up so its provider delivers it again.
- localities(file ids): where each file's bytes are, in the Tape REST API's words (DISK, TAPE,
  DISK_AND_TAPE, LOST, NONE, UNAVAILABLE; object copies count as tape).
- register_check(name, check, repairs), Violation: a promise of a layer above the archive
  (distribution's order outputs) checked with the archive's own by tests and reconciliation.
- add_bucket(name, bucket, store, prefix, create): an object-store bucket as a copy target;
  object_store_configured(store): whether settings name its endpoint.

State lives in the database; every step is idempotent on ids, so a message lost or delivered
twice, or a mover killed mid-write, costs time but never data.
"""
from ..invariants import Violation
from ..invariants import register as register_check
from .admission import archive_granule, archive_granules
from .audits import audit_files
from .background import queue_copy
from .buckets import add_bucket, object_store_configured
from .cache import end_keep, keep_until, touch_if_cached
from .completeness import complete_copies, readable_copies
from .locality import localities
from .manager import run_until_idle
from .paths import cache_path
from .policy import ArchiveError, policy_copies
from .queueing import MAX_ATTEMPTS, retry_failed
from .recall import (
    cancel_recalls,
    estimate_availability,
    make_available,
    recalls_eta_s,
    register_recall_needer,
)
from .remedies import copy_work, damaged_only_copies, only_copy_damaged, request_actions
from .retirement import MAX_REASON as RETIRE_REASON_MAX
from .retirement import delete as delete_granule
from .retirement import fail_for_redelivery
from .retirement import restore as restore_granule
from .retirement import withdraw as withdraw_granule
from .serving import BLOCK as CHECK_BLOCK
from .serving import CacheDamaged, open_checked, open_for_serving, open_object_for_serving

__all__ = [
    "Violation",
    "register_check",
    "CHECK_BLOCK",
    "MAX_ATTEMPTS",
    "RETIRE_REASON_MAX",
    "ArchiveError",
    "CacheDamaged",
    "add_bucket",
    "archive_granule",
    "archive_granules",
    "audit_files",
    "cache_path",
    "cancel_recalls",
    "complete_copies",
    "copy_work",
    "damaged_only_copies",
    "delete_granule",
    "end_keep",
    "estimate_availability",
    "fail_for_redelivery",
    "keep_until",
    "localities",
    "make_available",
    "object_store_configured",
    "only_copy_damaged",
    "open_checked",
    "open_for_serving",
    "open_object_for_serving",
    "policy_copies",
    "queue_copy",
    "readable_copies",
    "recalls_eta_s",
    "register_recall_needer",
    "request_actions",
    "restore_granule",
    "retry_failed",
    "run_until_idle",
    "touch_if_cached",
    "withdraw_granule",
]
