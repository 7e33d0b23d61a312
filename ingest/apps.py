from django.apps import AppConfig


class IngestConfig(AppConfig):
    name = "ingest"
    verbose_name = "Ingest"

    def ready(self):
        from backend.archive.signals import granules_archived
        from backend.metrics.exposition import register

        from .exposition import collect
        from .services.outcome import on_granules_archived

        granules_archived.connect(on_granules_archived,
                                  dispatch_uid="ingest.granules_archived")
        register("ingest", collect)
