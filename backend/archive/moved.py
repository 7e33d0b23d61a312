"""When a request last moved, as one indexed expression (index request_moved)."""
from django.db.models.functions import Coalesce, Greatest


def last_moved():
    """When a request last started or finished (either may be unset): how alerts.watch_queues
    tells a queue's progress, from an index rather than a scan of every request of the kind."""
    return Greatest(Coalesce("started_at", "finished_at"), Coalesce("finished_at", "started_at"))
