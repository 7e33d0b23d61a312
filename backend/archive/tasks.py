"""Thin Celery wrappers around the storage manager."""
from celery import shared_task

from .services import manager


@shared_task(name="backend.archive.tick")
def tick(window=None):
    """Recover stale work and start idle drives on queued work (also run by beat); a burst of
    nudges is one tick (manager.tick_due; `window`: a trailing tick's)."""
    if manager.tick_due(window):
        manager.tick()


@shared_task(name="backend.archive.run_drive")
def run_drive(drive_id):
    manager.run_drive(drive_id)


@shared_task(name="backend.archive.run_objects")
def run_objects():
    """Work queued object-store migrations and recalls until none is left."""
    manager.run_object_movers()


@shared_task(name="backend.archive.reconcile")
def reconcile(run_id):
    """Do one reconciliation run (idempotent: a finished run is left as it is)."""
    from .services import reconcile as reconciliation

    reconciliation.run(run_id)


@shared_task(name="backend.archive.reconcile_sample")
def reconcile_sample():
    """The daily sampled reconciliation (beat): report only, an operator repairs. Runs asked
    for whose message was lost are done first."""
    from .services import reconcile as reconciliation

    reconciliation.run_pending()
    reconciliation.reconcile()


@shared_task(name="backend.archive.compact_totals")
def compact_totals():
    """Fold the dashboards' kept totals (beat, every minute)."""
    from . import operations

    operations.compact_totals()


@shared_task(name="backend.archive.scrub_cache")
def scrub_cache():
    """Read a budget of cached files again and check them (beat; see services.scrub)."""
    from .services import scrub

    return scrub.scrub()


@shared_task(name="backend.archive.watch_alerts")
def watch_alerts():
    """Beat: a daily target projected to be missed, a queue stuck (each told once)."""
    from . import alerts

    return alerts.watch()
