from django.apps import AppConfig


class DistributionConfig(AppConfig):
    name = "distribution"
    verbose_name = "Distribution"

    def ready(self):
        from backend.archive.signals import files_recalled, granule_retired, granules_archived
        from backend.metrics.exposition import register

        from .exposition import collect
        from .services import order_outputs, stage_checks
        from .services.receivers import (
            on_files_recalled,
            on_granule_retired,
            on_granules_archived,
        )

        granules_archived.connect(on_granules_archived,
                                  dispatch_uid="distribution.granules_archived")
        files_recalled.connect(on_files_recalled, dispatch_uid="distribution.files_recalled")
        granule_retired.connect(on_granule_retired, dispatch_uid="distribution.granule_retired")
        register("distribution", collect)
        order_outputs.register()
        stage_checks.register()
