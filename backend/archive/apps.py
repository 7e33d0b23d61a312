from django.apps import AppConfig


class ArchiveConfig(AppConfig):
    name = "backend.archive"
    label = "archive"

    def ready(self):
        from backend.catalog import storage
        from backend.metrics.exposition import register

        from . import residency
        from .exposition import collect
        from .services import event_lanes, kept_days

        storage.register(residency.STORAGE)
        register("archive", collect)
        kept_days.register()
        event_lanes.register()
