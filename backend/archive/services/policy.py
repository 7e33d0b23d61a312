"""What a collection's archive policy requires, and the refusal of the archive tier."""
from backend.errors import Conflict

from ..models import ArchivePolicy


class ArchiveError(Conflict):
    """An archive operation that cannot proceed, with a message for operators."""


def policy_copies(collection):
    """[(copy_number, target)] the collection's policy requires; a target is a VolumeGroup
    (tape) or a Bucket (object store), each with a `medium` and a `name`."""
    try:
        policy = collection.archive_policy
    except ArchivePolicy.DoesNotExist as exc:
        raise ArchiveError(f"collection {collection.key} has no archive policy") from exc
    copies = [(c.copy_number, c.target) for c in policy.copy_groups.select_related(
        "volume_group", "bucket")]
    if not copies:
        raise ArchiveError(f"the archive policy of {collection.key} names no copy target")
    return copies


def target_fields(target):
    """The fields of an archive request that send a copy to `target`."""
    if target.medium == "object":
        return {"bucket": target, "volume_group": None}
    return {"volume_group": target, "bucket": None}
