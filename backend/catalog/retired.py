"""Withdrawn and deleted granules: what every interface that serves a granule's bytes says
about one that left the catalog (a 410 with the operator's reason, read from the audit trail:
the reason is recorded once, where the change was made)."""
from backend.accounts.audit import events_for
from backend.errors import Gone

from .models import Granule

RETIRED = (Granule.State.WITHDRAWN, Granule.State.DELETED)
# audit actions that retire a granule (archive.services.retirement records them)
WITHDRAW, RESTORE, DELETE = "withdraw", "restore", "delete"


def retired_reason(granule):
    """Why `granule` is withdrawn or deleted, in a sentence (None: it is not)."""
    if granule.state not in RETIRED:
        return None
    action = WITHDRAW if granule.state == Granule.State.WITHDRAWN else DELETE
    event = events_for("granule", granule.pk).filter(action=action).first()
    if event is None:  # deleted by a collection's duplicate policy, not by an operator
        return f"{granule} was {granule.state}: a newer version replaced it"
    return f"{granule} was {granule.state} by an operator: {event.reason}"


def refuse_if_retired(granule):
    """A 410 naming the reason when `granule` is withdrawn or deleted."""
    reason = retired_reason(granule)
    if reason is not None:
        raise Gone(reason)
