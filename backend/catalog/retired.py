"""Withdrawn and deleted granules: what every interface that serves a granule's bytes says
about one that left the catalog (a 410 with the operator's reason and when, read from the
audit trail: the reason is recorded once, where the change was made)."""
from dataclasses import dataclass
from datetime import datetime

from backend.accounts.audit import events_for
from backend.errors import Gone

from .models import Granule

RETIRED = (Granule.State.WITHDRAWN, Granule.State.DELETED)
RETIRED_STATES = [state.value for state in RETIRED]   # as the API names them
# audit actions that retire a granule (archive.services.retirement records them)
WITHDRAW, RESTORE, DELETE = "withdraw", "restore", "delete"


@dataclass(frozen=True)
class Retirement:
    reason: str         # a sentence: what happened and why
    at: datetime        # when


def retirement(granule):
    """Why and when `granule` was withdrawn or deleted (None: it is not)."""
    if granule.state not in RETIRED:
        return None
    action = WITHDRAW if granule.state == Granule.State.WITHDRAWN else DELETE
    event = events_for("granule", granule.pk).filter(action=action).first()
    if event is None:  # deleted by a collection's duplicate policy, not by an operator
        return Retirement(f"{granule} was {granule.state}: a newer version replaced it",
                          granule.updated_at)
    return Retirement(f"{granule} was {granule.state} by an operator: {event.reason}", event.at)


def retired_reason(granule):
    """Why `granule` is withdrawn or deleted, in a sentence (None: it is not)."""
    retired = retirement(granule)
    return retired and retired.reason


def refuse_if_retired(granule):
    """A 410 naming the reason and the time when `granule` is withdrawn or deleted."""
    retired = retirement(granule)
    if retired is not None:
        raise Gone(f"{retired.reason} ({retired.at:%Y-%m-%d %H:%M} UTC)", extra={
            "state": granule.state, "retired_at": retired.at.isoformat()})
