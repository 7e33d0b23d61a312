from django.apps import AppConfig


class ArchiveConfig(AppConfig):
    name = "backend.archive"
    label = "archive"

    def ready(self):
        from backend.catalog import storage

        from . import residency

        storage.register(residency.STORAGE)
