"""The fair share of drives between kinds of recall: the operator's weights (audited like other
configuration) and what each kind was served lately, as the scheduler reads them."""
from datetime import timedelta

from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from backend.accounts import audit
from backend.errors import DomainError

from ..models import RecallShare
from .queueing import Req

MAX_WEIGHT = 1000
# the reads each kind was served within this window are weighed against its weight
WINDOW_S = 3600
KINDS = dict(Req.Share.choices)


def weights():
    """{kind: weight} the operator set; empty when none is set (shares play no part)."""
    return {s.kind: float(s.weight) for s in RecallShare.objects.all()}


def shares_board():
    """Every kind with its label, weight (1 when unset) and reads served in the window."""
    set_ = weights()
    served = served_lately()
    return [{"kind": kind, "label": label, "weight": int(set_.get(kind, 1)),
             "set": kind in set_, "served": int(served.get(kind, 0))}
            for kind, label in KINDS.items()]


def served_lately(now=None):
    """{kind: recalls running, or done within WINDOW_S}: what each kind got lately."""
    now = now or timezone.now()
    since = now - timedelta(seconds=WINDOW_S)
    rows = (Req.objects.filter(Q(state=Req.State.RUNNING)
                               | Q(state=Req.State.DONE, finished_at__gte=since),
                               kind=Req.Kind.RECALL)
            .order_by().values("share").annotate(n=Count("pk")))
    return {r["share"]: r["n"] for r in rows}


def set_weights(actor, document):
    """An operator sets weights: {"weights": {kind: whole number 1..MAX_WEIGHT}, "reason"};
    checked whole, saved with one audit record per change, or not at all."""
    if not isinstance(document, dict) or not isinstance(document.get("weights"), dict):
        raise DomainError('The body must be a JSON object with a "weights" object.', "weights")
    given = document["weights"]
    if not given:
        raise DomainError('"weights" is empty: name at least one kind.', "weights")
    unknown = sorted(str(k)[:40] for k in given if k not in KINDS)
    if unknown:
        raise DomainError(f"Unknown kinds {unknown}; the kinds are {sorted(KINDS)}.", "weights")
    for kind, weight in given.items():
        if isinstance(weight, bool) or not isinstance(weight, int) or not (
                1 <= weight <= MAX_WEIGHT):
            raise DomainError(f"The weight of {kind or 'other'!r} must be a whole number from 1 "
                              f"to {MAX_WEIGHT}.", "weights")
    reason = document.get("reason", "")
    if not isinstance(reason, str) or len(reason) > 2000:
        raise DomainError("reason must be text of at most 2000 characters.", "reason")
    with transaction.atomic():
        before = {s.kind: s.weight for s in RecallShare.objects.select_for_update()}
        for kind, weight in given.items():
            if before.get(kind) == weight:
                continue
            RecallShare.objects.update_or_create(kind=kind, defaults={"weight": weight})
            audit.record(actor, "update", "recall share", kind or "other",
                         label=KINDS[kind], reason=reason,
                         detail={"weight": [before.get(kind), weight]})
    return shares_board()
