from django.apps import AppConfig


class ConsoleConfig(AppConfig):
    """The operator's console: work that spans ingest, the archive and distribution at once
    (bulk operations over granules, failures grouped by reason, the dead-letter list)."""

    name = "console"
    verbose_name = "Operator console"

    def ready(self):
        from .services.bulk import needs

        needs.register()
