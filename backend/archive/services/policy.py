"""What a collection's archive policy requires, and the refusal of the archive tier."""
from backend.errors import Conflict

from ..models import ArchivePolicy


class ArchiveError(Conflict):
    """An archive operation that cannot proceed, with a message for operators."""


def policy_copies(collection):
    """[(copy_number, volume_group)] the collection's policy requires."""
    try:
        policy = collection.archive_policy
    except ArchivePolicy.DoesNotExist as exc:
        raise ArchiveError(f"collection {collection.key} has no archive policy") from exc
    copies = [(c.copy_number, c.volume_group) for c in policy.copy_groups.select_related(
        "volume_group")]
    if not copies:
        raise ArchiveError(f"the archive policy of {collection.key} names no volume group")
    return copies
