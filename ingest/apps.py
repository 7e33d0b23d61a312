from django.apps import AppConfig


class IngestConfig(AppConfig):
    name = "ingest"
    verbose_name = "Ingest"

    def ready(self):
        from backend.archive.signals import granule_archived

        from .services import on_granule_archived

        granule_archived.connect(on_granule_archived, dispatch_uid="ingest.granule_archived")
