"""A collection and its archive policy, configured together by an operator: checked as a whole,
saved in one transaction with its audit record, or not at all."""
from django.db import transaction

from backend.accounts import audit
from backend.catalog import configure as catalog_config
from backend.catalog.models import Collection
from backend.errors import Conflict, DomainError

from ..models import ArchivePolicy, Bucket, Silo, VolumeGroup
from .policy import target_fields

MAX_COPIES = 8
MAX_RESIDENCY_DAYS = 3650


def policy_of(collection):
    """{copies: [target names, copy 1 first], cache_residency_days}, or None without one."""
    policy = ArchivePolicy.objects.filter(collection=collection).first()  # not the cached one
    if policy is None:
        return None
    return {
        "copies": [c.target.name for c in policy.copy_groups.select_related(
            "volume_group", "bucket").order_by("copy_number")],
        "cache_residency_days": policy.cache_residency_days,
    }


def _targets(names):
    """The named copy targets (volume groups and buckets) in order: known, distinct, tape
    copies in different silos where there are several silos (a silo fire must not take every
    copy)."""
    if not names:
        raise DomainError("a policy needs at least one copy", "copies")
    if len(names) > MAX_COPIES:
        raise DomainError(f"at most {MAX_COPIES} copies", "copies")
    if len(set(names)) != len(names):
        raise DomainError("each copy goes to a different volume group or bucket", "copies")
    found = {b.name: b for b in Bucket.objects.filter(name__in=names)}
    found.update({g.name: g for g in VolumeGroup.objects.filter(name__in=names)
                  .select_related("silo")})
    unknown = [n for n in names if n not in found]
    if unknown:
        raise DomainError(f"no volume group or bucket {', '.join(unknown)}", "copies")
    targets = [found[n] for n in names]
    if Silo.objects.count() > 1:
        seen = {}
        for group in targets:
            if group.medium != "tape" or group.silo_id is None:
                continue
            if group.silo_id in seen:
                raise DomainError(f"{seen[group.silo_id]} and {group.name} are both in silo "
                                  f"{group.silo.name}; with several silos each copy goes to "
                                  "another silo", "copies")
            seen[group.silo_id] = group.name
    return targets


def _set_policy(collection, policy):
    before = policy_of(collection)
    kept = before or {"copies": [], "cache_residency_days": 0}  # what a partial change keeps
    residency = policy.get("cache_residency_days", kept["cache_residency_days"])
    if not 0 <= residency <= MAX_RESIDENCY_DAYS:
        raise DomainError(f"between 0 and {MAX_RESIDENCY_DAYS} days", "cache_residency_days")
    groups = _targets(policy.get("copies", kept["copies"]) or [])
    if (before is not None and len(before["copies"]) != len(groups)
            and collection.granules.exists()):
        raise Conflict(f"{collection.key} holds granules with {len(before['copies'])} copies "
                       f"each; the number of copies cannot change here (archived granules "
                       "would not have the copies their policy asks for)", "copies")
    # A copy sent to another target (a volume group or a bucket, another medium even) applies
    # to new granules at once; the copies already written stay where they are, and count,
    # until a bulk "move copies" job writes them to the new target and releases the old.
    policy_row, _ = ArchivePolicy.objects.update_or_create(
        collection=collection, defaults={"cache_residency_days": residency})
    if before is None or before["copies"] != [g.name for g in groups]:
        policy_row.copy_groups.all().delete()
        for number, target in enumerate(groups, start=1):
            policy_row.copy_groups.create(copy_number=number, **target_fields(target))


def _diff(before, after):
    return {k: [before.get(k), v] for k, v in after.items() if before.get(k) != v}


def configure_collection(actor, collection, values, *, policy=None, approved_users=None,
                         reason=""):
    """Create (collection=None) or change a collection and its policy; a new one needs a
    policy. Returns the collection; records who changed which fields from what to what."""
    creating = collection is None
    if creating and policy is None:
        raise DomainError("a new collection needs an archive policy", "copies")
    with transaction.atomic():
        if creating:
            collection = Collection()
            before = {}
        else:
            collection = Collection.objects.select_for_update().get(pk=collection.pk)
            before = {**catalog_config.snapshot(collection), **{
                f"policy.{k}": v for k, v in (policy_of(collection) or {}).items()}}
        catalog_config.save_collection(collection, values, approved_users)
        if policy is not None:
            _set_policy(collection, policy)
        after = {**catalog_config.snapshot(collection), **{
            f"policy.{k}": v for k, v in (policy_of(collection) or {}).items()}}
        changes = _diff(before, after)
        if creating:  # a new collection's record names what was set, not every blank field
            changes = {k: v for k, v in changes.items() if v[1] not in ("", None, [])}
        if changes:
            audit.record(actor, "create" if creating else "update", "collection", collection.pk,
                         label=collection.key, reason=reason, detail={"changes": changes})
    return collection
