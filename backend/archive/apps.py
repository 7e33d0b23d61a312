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
    """A worker that takes the archive's queue loads the S3 client's code in its main process
    before its pool forks, when an object store is configured (~37 MB, shared by its
    children; nothing per task)."""
    from django.conf import settings

    from .media import objectstore

    queues = getattr(getattr(sender, "app", None), "amqp", None)
    taken = set(queues.queues.consume_from or ()) if queues is not None else {"archive"}
    if "archive" in taken and any(
            store.get("endpoint_url") for store in settings.GRANARY_OBJECT_STORES.values()):
        objectstore.preload()
