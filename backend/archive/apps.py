from django.apps import AppConfig


class ArchiveConfig(AppConfig):
    name = "backend.archive"
    label = "archive"

    def ready(self):
        from backend.catalog import storage
        from backend.metrics.exposition import register

        from . import residency
        from .exposition import collect

        storage.register(residency.STORAGE)
        register("archive", collect)
