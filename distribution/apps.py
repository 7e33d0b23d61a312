from django.apps import AppConfig


class DistributionConfig(AppConfig):
    name = "distribution"
    verbose_name = "Distribution"

    def ready(self):
        from backend.archive.signals import granule_archived

        from .services import on_granule_archived

        granule_archived.connect(on_granule_archived,
                                 dispatch_uid="distribution.granule_archived")
