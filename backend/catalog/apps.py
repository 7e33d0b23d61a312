from django.apps import AppConfig


class CatalogConfig(AppConfig):
    name = "backend.catalog"
    label = "catalog"
    verbose_name = "Catalog"

    def ready(self):
        from . import lookups

        lookups.register()
