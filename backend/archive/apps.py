from django.apps import AppConfig


class ArchiveConfig(AppConfig):
    name = "backend.archive"
    label = "archive"

    def ready(self):
        from celery.signals import worker_init

        from backend.catalog import storage
        from backend.metrics.exposition import register

        from . import residency
        from .exposition import collect
        from .services import event_lanes, kept_days

        storage.register(residency.STORAGE)
        register("archive", collect)
        kept_days.register()
        event_lanes.register()
        worker_init.connect(_preload_object_stores, weak=False)


def _preload_object_stores(sender=None, **_):
    """A worker's main process, before its pool forks (services.buckets.preload_clients)."""
    from .services import buckets

    amqp = getattr(getattr(sender, "app", None), "amqp", None)
    buckets.preload_clients(set(amqp.queues.consume_from or ()) if amqp else {"archive"})
